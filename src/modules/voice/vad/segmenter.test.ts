import { describe, expect, it } from 'vitest';
import { DEFAULT_TURN_DETECTION, FRAME_MS, Segmenter } from './segmenter.js';
import type { TurnDetection, VadEvent } from './types.js';

const FRAME_BYTES = 1024;

/** Frame number `n` of a stream: every sample holds n, so audio can be traced back to frames. */
function frameAudio(n: number): Buffer {
  const audio = Buffer.alloc(FRAME_BYTES);
  for (let i = 0; i < FRAME_BYTES; i += 2) audio.writeInt16LE(n % 32768, i);
  return audio;
}

/** The frame numbers an audio buffer is made of (one entry per sample run of a frame). */
function framesIn(audio: Buffer): number[] {
  const out: number[] = [];
  for (let i = 0; i < audio.length; i += 2) {
    const n = audio.readInt16LE(i);
    if (out.at(-1) !== n) out.push(n);
  }
  return out;
}

interface Timed {
  frame: number;
  event: VadEvent;
}

/** Feeds `probabilities` one frame each, numbering frames from `first`. */
function feed(seg: Segmenter, probabilities: number[], first = 0): Timed[] {
  return probabilities.flatMap((p, i) =>
    seg.frame(frameAudio(first + i), p).map((event) => ({ frame: first + i, event })),
  );
}

const run = (ms: number, p: number): number[] => Array<number>(Math.round(ms / FRAME_MS)).fill(p);
const settings = (over: Partial<TurnDetection> = {}): TurnDetection => ({
  ...DEFAULT_TURN_DETECTION,
  ...over,
});
const kinds = (events: Timed[]): string[] =>
  events.filter((e) => e.event.type !== 'speech_audio').map((e) => e.event.type);

describe('Segmenter', () => {
  it('says it is hearing from the first speech frame, and not after a blip is dropped', () => {
    const seg = new Segmenter(settings());
    feed(seg, run(320, 0));
    expect(seg.hearing).toBe(false);
    feed(seg, [0.95]);
    expect(seg.hearing).toBe(true);
    feed(seg, run(64, 0.95));
    expect(seg.hearing).toBe(true);
    feed(seg, run(192, 0));
    expect(seg.hearing).toBe(false);
    feed(seg, [...run(256, 0.95), ...run(100, 0)]);
    expect(seg.hearing).toBe(true);
    feed(seg, run(600, 0));
    expect(seg.hearing).toBe(false);
  });

  it('a 100 ms blip, or 192 ms of speech, starts nothing', () => {
    const seg = new Segmenter(settings());
    expect(feed(seg, [...run(640, 0), ...run(96, 0.95), ...run(2000, 0)])).toEqual([]);
    expect(feed(seg, [...run(192, 0.95), ...run(2000, 0)])).toEqual([]);
  });

  it('250 ms of speech starts an utterance at its onset, once min_speech_ms is reached', () => {
    const seg = new Segmenter(settings());
    const events = feed(seg, [...run(640, 0.02), ...run(256, 0.9), ...run(1000, 0.02)]);
    const start = events.find((e) => e.event.type === 'speech_start');
    expect(start?.event).toMatchObject({ type: 'speech_start', onsetMs: 640 });
    // 200 ms take 7 frames (224 ms): frames 20..26, so the start is reported with frame 26.
    expect(start?.frame).toBe(26);
    expect(kinds(events)).toEqual(['speech_start', 'speech_end']);
  });

  it('a 300 ms pause inside speech does not end the utterance (silence_ms 500)', () => {
    const seg = new Segmenter(settings({ silenceMs: 500 }));
    const events = feed(seg, [
      ...run(320, 0),
      ...run(640, 0.9),
      ...run(300, 0.05),
      ...run(640, 0.9),
      ...run(1000, 0),
    ]);
    expect(kinds(events)).toEqual(['speech_start', 'speech_end']);
    const end = events.find((e) => e.event.type === 'speech_end')?.event;
    expect(end).toMatchObject({ endMs: (10 + 20 + 9 + 20) * FRAME_MS });
  });

  it('ends after silence_ms of non-speech: endMs at the last speech frame, decidedMs when confirmed', () => {
    const seg = new Segmenter(settings({ silenceMs: 500 }));
    const events = feed(seg, [...run(320, 0), ...run(640, 0.9), ...run(2000, 0)]);
    const end = events.find((e) => e.event.type === 'speech_end');
    const lastSpeechFrame = 10 + 20 - 1;
    // 500 ms take 16 frames (512 ms).
    expect(end?.frame).toBe(lastSpeechFrame + 16);
    expect(end?.event).toEqual({
      type: 'speech_end',
      endMs: (lastSpeechFrame + 1) * FRAME_MS,
      decidedMs: (lastSpeechFrame + 17) * FRAME_MS,
    });
  });

  it('a shorter silence_ms ends sooner', () => {
    const seg = new Segmenter(settings({ silenceMs: 200 }));
    const events = feed(seg, [...run(640, 0.9), ...run(1000, 0)]);
    const end = events.find((e) => e.event.type === 'speech_end')?.event;
    expect(end).toEqual({ type: 'speech_end', endMs: 640, decidedMs: 640 + 7 * FRAME_MS });
  });

  it('hysteresis: a frame between the two thresholds neither starts speech nor ends it', () => {
    // 0.4 is below the threshold (0.5) and above the negative threshold (0.35).
    expect(feed(new Segmenter(settings({ threshold: 0.5 })), run(2016, 0.4))).toEqual([]);
    const seg = new Segmenter(settings({ threshold: 0.5 }));
    const events = feed(seg, [...run(320, 0.9), ...run(992, 0.4), ...run(992, 0.3)]);
    // Speech lasts through the 0.4 frames and ends where 0.3 (below 0.35) begins.
    expect(events.find((e) => e.event.type === 'speech_end')?.event).toMatchObject({
      endMs: (10 + 31) * FRAME_MS,
    });
  });

  it('the threshold setting decides what counts as speech', () => {
    expect(feed(new Segmenter(settings({ threshold: 0.8 })), run(1000, 0.7))).toEqual([]);
    expect(kinds(feed(new Segmenter(settings({ threshold: 0.6 })), run(1000, 0.7)))).toEqual([
      'speech_start',
    ]);
  });

  it('starts with pre-roll_ms of the audio before the onset, then the audio since the onset', () => {
    const seg = new Segmenter(settings({ prerollMs: 300 }));
    const events = feed(seg, [...run(1600, 0), ...run(320, 0.9)]);
    const start = events[0]?.event;
    if (start?.type !== 'speech_start') throw new Error('no speech_start');
    expect(start.onsetMs).toBe(50 * FRAME_MS);
    expect(start.audio.length).toBe(300 * 32 + 7 * FRAME_BYTES);
    // 300 ms = 9.375 frames: the end of frame 40 and frames 41..49 are the pre-roll, 50..56 speech.
    expect(framesIn(start.audio)).toEqual([
      40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56,
    ]);
    expect(start.audio.readInt16LE(0)).toBe(40);
  });

  it('the pre-roll is shorter when the stream is younger, and empty at prerollMs 0', () => {
    const young = feed(new Segmenter(settings()), [...run(96, 0), ...run(320, 0.9)])[0]?.event;
    expect(young?.type === 'speech_start' && framesIn(young.audio)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
    const none = feed(new Segmenter(settings({ prerollMs: 0 })), [
      ...run(640, 0),
      ...run(320, 0.9),
    ]);
    const start = none[0]?.event;
    expect(start?.type === 'speech_start' && start.audio.length).toBe(7 * FRAME_BYTES);
  });

  it('streams every frame of the utterance once, in order, up to the decision', () => {
    const seg = new Segmenter(settings({ prerollMs: 0 }));
    const events = feed(seg, [
      ...run(320, 0),
      ...run(640, 0.9),
      ...run(320, 0),
      ...run(320, 0.9),
      ...run(1000, 0),
    ]);
    const audio = events.flatMap((e) =>
      e.event.type === 'speech_start' || e.event.type === 'speech_audio' ? [e.event.audio] : [],
    );
    const end = events.find((e) => e.event.type === 'speech_end');
    const frames = framesIn(Buffer.concat(audio));
    expect(frames[0]).toBe(10);
    expect(frames).toEqual(Array.from({ length: (end?.frame ?? 0) - 9 }, (_, i) => 10 + i));
  });

  it('tolerates short gaps while speech gathers, but not a gap of 160 ms', () => {
    const tolerant = feed(new Segmenter(settings()), [
      ...run(96, 0.9),
      ...run(64, 0),
      ...run(160, 0.9),
      ...run(800, 0),
    ]);
    expect(tolerant[0]?.event).toMatchObject({ type: 'speech_start', onsetMs: 0 });
    const broken = feed(new Segmenter(settings()), [
      ...run(96, 0.9),
      ...run(160, 0),
      ...run(160, 0.9),
      ...run(800, 0),
    ]);
    expect(broken).toEqual([]);
  });

  it('sparse blips never add up to an utterance', () => {
    const blip = [0.9, 0.9, 0, 0, 0, 0, 0];
    expect(feed(new Segmenter(settings()), Array<number[]>(200).fill(blip).flat())).toEqual([]);
  });

  it('reset ends an utterance without an event, restarts stream time and forgets the pre-roll', () => {
    const seg = new Segmenter(settings());
    expect(kinds(feed(seg, [...run(640, 0), ...run(640, 0.9)]))).toEqual(['speech_start']);
    seg.reset();
    expect(seg.elapsedMs).toBe(0);
    expect(feed(seg, run(1000, 0), 1000)).toEqual([]);
    const restart = feed(seg, [...run(64, 0), ...run(320, 0.9)], 2000)[0]?.event;
    expect(restart).toMatchObject({ type: 'speech_start', onsetMs: (31 + 2) * FRAME_MS });
    // The pre-roll holds only audio pushed since the reset.
    expect(
      restart?.type === 'speech_start' && framesIn(restart.audio).every((n) => n >= 1000),
    ).toBe(true);
  });

  it('min_speech_ms 0 starts with the first speech frame', () => {
    const events = feed(new Segmenter(settings({ minSpeechMs: 0 })), [0, 0, 0.9, 0]);
    expect(events[0]).toMatchObject({ frame: 2, event: { type: 'speech_start', onsetMs: 64 } });
  });

  it('rejects settings out of range', () => {
    expect(() => new Segmenter(settings({ threshold: 1.5 }))).toThrow(RangeError);
    expect(() => new Segmenter(settings({ silenceMs: -1 }))).toThrow(/silenceMs/);
    expect(() => new Segmenter(settings({ minSpeechMs: Number.NaN }))).toThrow(RangeError);
    expect(() => new Segmenter(settings({ prerollMs: 60_000 }))).toThrow(RangeError);
  });
});
