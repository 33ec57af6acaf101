import { setTimeout as sleep } from 'node:timers/promises';
import { AsyncQueue } from '../../platform/async-queue.js';
import type { AudioChunk, TtsProvider } from '../../providers/tts/types.js';
import type { AnswerFrame } from '../chat/protocol.js';
import type { ChatService } from '../chat/service.js';
import type { TurnOutcome } from '../chat/turn.js';
import type { CitationDto } from '../conversations/schema.js';
import type { PlaybackGate } from './gate.js';
import { heardText, type SpokenSentence } from './heard.js';
import type { VoiceServerFrame } from './protocol.js';
import { speechSplitter } from './sentences.js';

/**
 * One spoken answer (DECISIONS 5): the chat engine's answer to the stored question (same
 * retrieval, tools, citations), its text cut into sentences for the speech engine while it streams,
 * the audio sent paced near real time (at most `leadMs` ahead of playback, so that a barge-in
 * stops what the listener hears, and the server can tell how much was played). The turn's signal
 * stops model, tools and speech together. Nothing is stored here: the outcome says what was heard.
 */

export interface VoiceTurnInput {
  userId: string;
  /** The stored question. */
  question: Parameters<ChatService['generate']>[1];
  responseId: string;
  signal: AbortSignal;
  sampleRate: number;
  voice: string | undefined;
  language: string;
  /** How far audio may run ahead of the listener's playback. */
  leadMs: number;
  /** Holds the audio while the user may be starting to speak. */
  gate: PlaybackGate;
  send(frame: VoiceServerFrame): void;
  /** The first audio left: the session goes SPEAKING. */
  onFirstAudio(): void;
  /**
   * The client's `response.truncate` position, once the turn was cut short (`played`: some audio
   * had gone out, so the client may still say how much of it it played).
   */
  truncated(played: boolean): Promise<number | undefined>;
}

export interface VoiceTurnOutcome {
  /** What is stored: the whole answer, or what was heard of it. */
  text: string;
  citations: CitationDto[];
  toolCalls: TurnOutcome['toolCalls'];
  interrupted: boolean;
  /** The model's token counts for the whole answer, spoken or not (it was generated). */
  usage: TurnOutcome['usage'];
  /** The model's failure, or the speech engine's. */
  failure: { stage: 'llm' | 'tts'; error: unknown } | undefined;
  /** Milliseconds from the start of the turn. */
  firstTokenMs: number | undefined;
  firstAudioMs: number | undefined;
}

/** Audio sent so far and the playback clock, for pacing and for the heard text. */
class Playback {
  /** Each sentence's audio, as far as the engine has made it. */
  readonly sentences: SpokenSentence[] = [];
  /** Audio made by the engine so far. */
  producedMs = 0;
  /** Audio sent to the client so far. */
  sentMs = 0;
  startedAt: number | undefined;

  /** Sentence `index` of `texts`; those before it that had nothing to say are whole and silent. */
  sentence(index: number, texts: readonly string[]): SpokenSentence {
    for (let i = this.sentences.length; i <= index; i++) {
      for (const earlier of this.sentences) earlier.complete = true;
      this.sentences.push({ text: texts[i] ?? '', ms: 0, complete: false });
    }
    return this.sentences[index] ?? { text: '', ms: 0, complete: false };
  }

  /** Milliseconds the listener has heard by now (real time since the first audio, at most what was sent). */
  playedMs(now = performance.now()): number {
    return this.startedAt === undefined ? 0 : Math.min(this.sentMs, now - this.startedAt);
  }

  /** Waits until sending `ms` more keeps within `leadMs` of playback. */
  async pace(leadMs: number, signal: AbortSignal): Promise<void> {
    const ahead = this.sentMs - this.playedMs();
    if (ahead > leadMs) await sleep(ahead - leadMs, undefined, { signal });
  }
}

export async function runVoiceTurn(
  chat: ChatService,
  tts: TtsProvider,
  input: VoiceTurnInput,
): Promise<VoiceTurnOutcome> {
  const started = performance.now();
  const sentences = new AsyncQueue<string>();
  const texts: string[] = [];
  const splitter = speechSplitter();
  const speak = (parts: string[]) => {
    for (const s of parts) {
      texts.push(s);
      sentences.push(s);
    }
  };
  const emit = (frame: AnswerFrame) => {
    if (frame.type === 'chunk') {
      // After barge-in nothing more is said or shown as speech (a write's closing sentence is
      // stored with the message; its tool result still reaches the client).
      if (input.signal.aborted) return;
      input.send({ type: 'response.delta', response_id: input.responseId, text: frame.delta });
      speak(splitter.push(frame.delta));
    } else {
      forwardFrame(frame, (f) => {
        input.send(f);
      });
    }
  };
  const playback = new Playback();
  const speaking = speakAll(tts, sentences, texts, playback, input);
  let outcome: TurnOutcome;
  try {
    outcome = await chat.generate(
      input.userId,
      input.question,
      input.responseId,
      input.signal,
      emit,
    );
  } finally {
    speak(splitter.flush());
    sentences.end();
  }
  const spoken = await speaking;
  if (!input.signal.aborted && spoken.ok) await untilPlayed(playback, input.signal);
  const interrupted = outcome.interrupted || input.signal.aborted || !spoken.ok;
  let text = outcome.content;
  if (interrupted) {
    const playedMs = playback.playedMs();
    const truncated = await input.truncated(playback.startedAt !== undefined);
    const heardMs = Math.min(truncated ?? playedMs, playback.sentMs);
    text = heardText(playback.sentences, heardMs, input.language);
  }
  return {
    text,
    citations: outcome.citations.filter((c) => text.includes(`[${String(c.index)}]`)),
    toolCalls: outcome.toolCalls,
    interrupted,
    usage: outcome.usage,
    failure: failureOf(outcome, spoken),
    firstTokenMs: outcome.firstChunkMs,
    firstAudioMs: playback.startedAt === undefined ? undefined : playback.startedAt - started,
  };
}

/** Tool and error frames of the chat engine, in the voice protocol's words. */
function forwardFrame(frame: AnswerFrame, send: (f: VoiceServerFrame) => void): void {
  if (frame.type === 'tool_call') {
    const { id, name, arguments: args } = frame.call;
    send({ type: 'tool.call', call_id: id, name, arguments: args });
  } else if (frame.type === 'tool_result') {
    const { id, name, result, error } = frame.call;
    send({ type: 'tool.result', call_id: id, name, result, ...(error === null ? {} : { error }) });
  } else if (frame.type === 'error') {
    send({ type: 'error', code: frame.code, message: frame.message, recoverable: true });
  }
}

/** Audio read from the speech engine ahead of playback at most; past it reading waits. */
const MAX_READ_AHEAD_MS = 30_000;

type Spoken = { ok: true } | { ok: false; err: unknown };

/**
 * Speaks the sentences as they come: the engine's audio is read as soon as it is made (so each
 * sentence's whole duration is known early, for the heard text), and sent paced to playback.
 */
async function speakAll(
  tts: TtsProvider,
  sentences: AsyncQueue<string>,
  texts: readonly string[],
  playback: Playback,
  input: VoiceTurnInput,
): Promise<Spoken> {
  const { signal } = input;
  const ready = new AsyncQueue<AudioChunk>();
  const reading = readSpeech(tts, sentences, texts, playback, input, ready);
  let seq = 0;
  let announced = -1;
  try {
    for await (const chunk of ready) {
      await playback.pace(input.leadMs, signal);
      await input.gate.pass(signal);
      if (signal.aborted) break;
      playback.sentMs += durationMs(chunk);
      if (playback.startedAt === undefined) {
        playback.startedAt = performance.now();
        input.onFirstAudio();
      }
      const { sentence } = chunk;
      // The sentence's text goes with its first audio.
      const text = sentence === announced ? undefined : (texts[sentence] ?? '');
      announced = sentence;
      const audio = chunk.pcm.toString('base64');
      input.send(audioFrame(input.responseId, seq++, chunk.sampleRate, { audio, sentence, text }));
    }
  } catch {
    // Pacing was cut short by the turn's signal: nothing more is sent.
  }
  const read = await reading;
  if (read.ok && !signal.aborted && seq > 0) {
    input.send(audioFrame(input.responseId, seq, input.sampleRate));
  }
  return read;
}

async function readSpeech(
  tts: TtsProvider,
  sentences: AsyncQueue<string>,
  texts: readonly string[],
  playback: Playback,
  input: VoiceTurnInput,
  ready: AsyncQueue<AudioChunk>,
): Promise<Spoken> {
  const { signal, sampleRate } = input;
  try {
    const options = { signal, sampleRate, language: input.language };
    const voice = input.voice === undefined ? {} : { voice: input.voice };
    for await (const chunk of tts.synthesize(sentences, { ...options, ...voice })) {
      const ms = durationMs(chunk);
      const spoken = playback.sentence(chunk.sentence, texts);
      spoken.ms += ms;
      if (chunk.sentenceEnd) spoken.complete = true;
      playback.producedMs += ms;
      ready.push(chunk);
      const ahead = playback.producedMs - playback.playedMs();
      if (ahead > MAX_READ_AHEAD_MS) await sleep(ahead - MAX_READ_AHEAD_MS, undefined, { signal });
    }
    return { ok: true };
  } catch (err) {
    if (signal.aborted) return { ok: true };
    input.send({
      type: 'error',
      code: 'TTS_ERROR',
      message: 'Speech synthesis failed',
      recoverable: true,
    });
    return { ok: false, err };
  } finally {
    ready.end();
  }
}

const durationMs = (chunk: AudioChunk) => (chunk.pcm.length / 2 / chunk.sampleRate) * 1000;

type AudioFrame = Extract<VoiceServerFrame, { type: 'audio.output' }>;

/** An `audio.output` frame: of a sentence's audio, or (without) the answer's last. */
function audioFrame(
  responseId: string,
  seq: number,
  sampleRate: number,
  spoken?: { audio: string; sentence: number; text: string | undefined },
): AudioFrame {
  return {
    type: 'audio.output',
    response_id: responseId,
    seq,
    audio: spoken?.audio ?? '',
    format: 'pcm16',
    sample_rate: sampleRate,
    final: spoken === undefined,
    ...(spoken === undefined ? {} : { sentence: spoken.sentence }),
    ...(spoken?.text === undefined ? {} : { sentence_text: spoken.text }),
  };
}

/** Until the listener has heard all audio sent (estimated), or the turn is cut short. */
async function untilPlayed(playback: Playback, signal: AbortSignal): Promise<void> {
  const left = playback.sentMs - playback.playedMs();
  if (left <= 0) return;
  await sleep(left, undefined, { signal }).catch(() => undefined);
}

function failureOf(
  outcome: TurnOutcome,
  spoken: { ok: true } | { ok: false; err: unknown },
): VoiceTurnOutcome['failure'] {
  if (outcome.error !== undefined) return { stage: 'llm', error: outcome.error };
  return spoken.ok ? undefined : { stage: 'tts', error: spoken.err };
}
