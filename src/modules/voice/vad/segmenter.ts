import type { TurnDetection, VadEvent } from './types.js';

/**
 * Turns per-frame speech probabilities into utterances (pure: no model, no I/O). The detector
 * feeds it each frame's audio with the probability Silero gave that frame.
 *
 * - A frame is speech when its probability reaches `threshold`; once in speech, frames stay speech
 *   until the probability falls below a lower threshold (hysteresis), so a word's soft edges do not
 *   flicker in and out.
 * - A run of speech is a candidate. It becomes an utterance (`speech_start`) once `minSpeechMs` of
 *   speech frames lie within a short window from its onset; a gap of CANDIDATE_GAP_MS drops it, so
 *   a click or a cough starts nothing. The event carries the pre-roll (`prerollMs` before the
 *   onset) and every frame since the onset.
 * - An utterance streams its frames (`speech_audio`) and ends after `silenceMs` of non-speech
 *   (`speech_end`).
 *
 * Memory is bounded whatever the input: the pre-roll ring and the candidate window only.
 */

/** Frame length the detector uses: 512 samples at 16 kHz. */
export const FRAME_MS = 32;
/** PCM16 mono at 16 kHz. */
const BYTES_PER_MS = 32;
/** How far below `threshold` a frame in speech may fall and still count as speech. */
export const HYSTERESIS = 0.15;
/** Non-speech inside a candidate that drops it (capped at `silenceMs`). */
export const CANDIDATE_GAP_MS = 160;
/** How much longer than `minSpeechMs` a candidate may take to gather its speech. */
export const CANDIDATE_SLACK_MS = 256;
/** The largest pre-roll accepted. */
export const MAX_PREROLL_MS = 5_000;

export const DEFAULT_TURN_DETECTION: Readonly<TurnDetection> = Object.freeze({
  silenceMs: 500,
  minSpeechMs: 200,
  threshold: 0.5,
  prerollMs: 300,
});

/** The probability below which a frame in speech stops being speech. */
export function negativeThreshold(threshold: number): number {
  return Math.max(threshold - HYSTERESIS, threshold / 2);
}

/** Throws a RangeError naming the first setting out of range. */
export function checkTurnDetection(settings: TurnDetection): void {
  const limits: [keyof TurnDetection, number, number][] = [
    ['silenceMs', 0, Number.MAX_SAFE_INTEGER],
    ['minSpeechMs', 0, Number.MAX_SAFE_INTEGER],
    ['threshold', 0, 1],
    ['prerollMs', 0, MAX_PREROLL_MS],
  ];
  for (const [key, min, max] of limits) {
    const value = settings[key];
    if (!Number.isFinite(value) || value < min || value > max) {
      throw new RangeError(`turn detection ${key} must be within ${min}..${max}`);
    }
  }
}

interface PendingFrame {
  audio: Buffer;
  speech: boolean;
}

const framesFor = (ms: number): number => Math.ceil(ms / FRAME_MS);

export class Segmenter {
  private readonly threshold: number;
  private readonly negative: number;
  private readonly minSpeechFrames: number;
  private readonly silenceFrames: number;
  private readonly gapFrames: number;
  private readonly windowFrames: number;
  private readonly prerollBytes: number;

  private phase: 'silent' | 'candidate' | 'speaking' = 'silent';
  private inSpeech = false;
  private frames = 0;
  /** The most recent audio outside a candidate, at least `prerollBytes` of it when available. */
  private history: Buffer[] = [];
  private historyBytes = 0;
  /** The candidate's frames, from its onset. */
  private pending: PendingFrame[] = [];
  private pendingSpeech = 0;
  /** Non-speech frames in a row (in a candidate or an utterance). */
  private quiet = 0;
  private lastSpeechEndMs = 0;

  constructor(settings: TurnDetection) {
    checkTurnDetection(settings);
    this.threshold = settings.threshold;
    this.negative = negativeThreshold(settings.threshold);
    this.minSpeechFrames = Math.max(1, framesFor(settings.minSpeechMs));
    this.silenceFrames = Math.max(1, framesFor(settings.silenceMs));
    this.gapFrames = Math.min(framesFor(CANDIDATE_GAP_MS), this.silenceFrames);
    this.windowFrames = this.minSpeechFrames + framesFor(CANDIDATE_SLACK_MS);
    this.prerollBytes = Math.round(settings.prerollMs * (BYTES_PER_MS / 2)) * 2;
  }

  /** A candidate or an utterance is in progress. */
  get hearing(): boolean {
    return this.phase !== 'silent';
  }

  /** Stream time (ms) at the end of the frames fed so far. */
  get elapsedMs(): number {
    return this.frames * FRAME_MS;
  }

  /** Reads the next frame (FRAME_MS of PCM16) and its speech probability. */
  frame(audio: Buffer, probability: number): VadEvent[] {
    const index = this.frames++;
    this.inSpeech = probability >= (this.inSpeech ? this.negative : this.threshold);
    switch (this.phase) {
      case 'silent':
        if (!this.inSpeech) {
          this.remember(audio);
          return [];
        }
        this.phase = 'candidate';
        return this.candidate(index, audio);
      case 'candidate':
        return this.candidate(index, audio);
      case 'speaking':
        return this.speaking(index, audio);
    }
  }

  /** Forgets everything, as for a new stream (stream time restarts at 0). */
  reset(): void {
    this.phase = 'silent';
    this.inSpeech = false;
    this.frames = 0;
    this.history = [];
    this.historyBytes = 0;
    this.clearCandidate();
    this.lastSpeechEndMs = 0;
  }

  private candidate(index: number, audio: Buffer): VadEvent[] {
    this.pending.push({ audio, speech: this.inSpeech });
    if (this.inSpeech) {
      this.pendingSpeech += 1;
      this.quiet = 0;
    } else if (++this.quiet >= this.gapFrames) {
      this.phase = 'silent';
      this.dropCandidate();
      return [];
    }
    // Slide the window: the onset moves to the first speech frame still inside it.
    while (this.pending.length > this.windowFrames || this.pending[0]?.speech === false) {
      this.shiftPending();
    }
    if (this.pendingSpeech < this.minSpeechFrames) return [];

    const onsetMs = (index + 1 - this.pending.length) * FRAME_MS;
    const preroll = Buffer.concat(this.history);
    const audioSinceOnset = this.pending.map((f) => f.audio);
    const lastSpeech = this.pending.findLastIndex((f) => f.speech);
    this.lastSpeechEndMs = onsetMs + (lastSpeech + 1) * FRAME_MS;
    this.phase = 'speaking';
    this.clearCandidate();
    for (const frame of audioSinceOnset) this.remember(frame);
    this.quiet = index + 1 - this.lastSpeechEndMs / FRAME_MS;
    const start = preroll.subarray(Math.max(0, preroll.length - this.prerollBytes));
    return [{ type: 'speech_start', onsetMs, audio: Buffer.concat([start, ...audioSinceOnset]) }];
  }

  private speaking(index: number, audio: Buffer): VadEvent[] {
    this.remember(audio);
    const events: VadEvent[] = [{ type: 'speech_audio', audio }];
    if (this.inSpeech) {
      this.quiet = 0;
      this.lastSpeechEndMs = (index + 1) * FRAME_MS;
    } else if (++this.quiet >= this.silenceFrames) {
      this.phase = 'silent';
      this.quiet = 0;
      events.push({
        type: 'speech_end',
        endMs: this.lastSpeechEndMs,
        decidedMs: (index + 1) * FRAME_MS,
      });
    }
    return events;
  }

  private shiftPending(): void {
    const first = this.pending.shift();
    if (!first) return;
    if (first.speech) this.pendingSpeech -= 1;
    this.remember(first.audio);
  }

  /** The candidate's audio becomes history (pre-roll for a later onset). */
  private dropCandidate(): void {
    for (const frame of this.pending) this.remember(frame.audio);
    this.clearCandidate();
  }

  private clearCandidate(): void {
    this.pending = [];
    this.pendingSpeech = 0;
    this.quiet = 0;
  }

  private remember(audio: Buffer): void {
    this.history.push(audio);
    this.historyBytes += audio.length;
    while (
      this.history.length > 1 &&
      this.historyBytes - (this.history[0]?.length ?? 0) >= this.prerollBytes
    ) {
      this.historyBytes -= this.history.shift()?.length ?? 0;
    }
  }
}
