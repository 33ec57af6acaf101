import { Rechunker, int16ToBuffer } from '../../platform/audio/pcm.js';
import { speakable, splitForSpeech } from './speakable.js';
import type { AudioChunk, TtsOptions } from './types.js';

/**
 * The part every TtsProvider shares: read sentences as they come, normalise them for the ear,
 * cut very long ones into bounded pieces, and speak the pieces in order with a bounded lookahead
 * (piece n+1 is being synthesised while piece n's chunks are consumed), answering ~100 ms
 * chunks. An engine only says how to speak one piece (`PieceSpeaker`).
 *
 * Cancellation: when the caller's signal aborts, or the caller stops iterating, every engine run
 * is aborted through one inner signal (child processes killed, requests closed) and the
 * iteration ends with the signal's reason; cleanup is awaited (bounded) before it returns.
 */

export interface SpeakContext {
  signal: AbortSignal;
  sampleRate: number;
  voice: string | undefined;
  language: string | undefined;
}

/** Speaks one piece of normalised text as PCM16 mono blocks at `context.sampleRate`. */
export type PieceSpeaker = (text: string, context: SpeakContext) => AsyncIterable<Int16Array>;

export interface PipelineSettings {
  /** Longest piece handed to the engine at once, in characters. */
  maxPieceChars: number;
  /** Pieces started ahead of the one being played (default 1). */
  lookahead?: number;
  /** Chunk length (default 100 ms). */
  chunkMs?: number;
  /** How long cleanup may take after an abort before the iteration returns anyway. */
  cleanupMs?: number;
}

interface Unit {
  sentence: number;
  last: boolean;
  iterator: AsyncIterator<Int16Array>;
  /** The latest `next()` asked of the iterator. */
  pending: Promise<IteratorResult<Int16Array>>;
  done: boolean;
}

export async function* synthesizeInPieces(
  sentences: AsyncIterable<string>,
  options: TtsOptions,
  speak: PieceSpeaker,
  settings: PipelineSettings,
): AsyncIterable<AudioChunk> {
  const { signal: caller, sampleRate } = options;
  caller.throwIfAborted();
  if (!Number.isInteger(sampleRate) || sampleRate < 4000 || sampleRate > 192_000) {
    throw new RangeError('sampleRate must be an integer from 4000 to 192000');
  }
  const inner = new AbortController();
  const onAbort = (): void => {
    inner.abort(caller.reason);
  };
  caller.addEventListener('abort', onAbort, { once: true });
  const queue = new UnitQueue((settings.lookahead ?? 1) + 1);
  const context: SpeakContext = {
    signal: inner.signal,
    sampleRate,
    voice: options.voice,
    language: options.language,
  };
  const producer = produce(sentences, queue, starter(speak, context), {
    language: options.language,
    maxPieceChars: settings.maxPieceChars,
    signal: inner.signal,
  });
  const player = new Player(sampleRate, settings.chunkMs ?? 100, inner.signal);
  try {
    for (;;) {
      const unit = await abortable(queue.take(), inner.signal);
      if (unit === undefined) break;
      yield* player.play(unit);
      queue.release();
    }
  } finally {
    caller.removeEventListener('abort', onAbort);
    inner.abort(caller.aborted ? caller.reason : new DOMException('stopped', 'AbortError'));
    await withDeadline(cleanup(queue.started, producer), settings.cleanupMs ?? 3000);
  }
}

/**
 * Turns units' PCM blocks into ~100 ms chunks. The latest chunk is held back until the next one
 * exists, so that the last chunk of a sentence (across its pieces) can carry `sentenceEnd`.
 */
class Player {
  readonly #sampleRate: number;
  readonly #chunkSamples: number;
  readonly #signal: AbortSignal;
  #held: AudioChunk | undefined;

  constructor(sampleRate: number, chunkMs: number, signal: AbortSignal) {
    this.#sampleRate = sampleRate;
    this.#chunkSamples = Math.max(1, Math.round((sampleRate * chunkMs) / 1000));
    this.#signal = signal;
  }

  async *play(unit: Unit): AsyncIterable<AudioChunk> {
    const rechunker = new Rechunker(this.#chunkSamples);
    for (;;) {
      const result = await abortable(unit.pending, this.#signal);
      if (result.done === true) break;
      for (const block of rechunker.push(result.value)) yield* this.#hold(block, unit);
      unit.pending = unit.iterator.next();
    }
    unit.done = true;
    const rest = rechunker.flush();
    if (rest !== undefined) yield* this.#hold(rest, unit);
    const last = this.#held;
    if (unit.last && last !== undefined) {
      this.#held = undefined;
      yield { ...last, sentenceEnd: true };
      // The caller may have aborted while it held the chunk: stop before anything else.
      this.#signal.throwIfAborted();
    }
  }

  *#hold(block: Int16Array, unit: Unit): Iterable<AudioChunk> {
    const previous = this.#held;
    this.#held = {
      pcm: int16ToBuffer(block),
      sampleRate: this.#sampleRate,
      sentence: unit.sentence,
      sentenceEnd: false,
    };
    if (previous !== undefined) {
      yield previous;
      this.#signal.throwIfAborted();
    }
  }
}

type StartUnit = (text: string, sentence: number, last: boolean) => Unit;

/** Starts a piece at once: its first block is asked for (the engine starts) before it is played. */
function starter(speak: PieceSpeaker, context: SpeakContext): StartUnit {
  return (text, sentence, last) => {
    const iterator = speak(text, context)[Symbol.asyncIterator]();
    const unit: Unit = { sentence, last, iterator, pending: iterator.next(), done: false };
    unit.pending.catch(() => undefined);
    return unit;
  };
}

/** Reads the sentences and starts their pieces as slots free up; never rejects. */
async function produce(
  sentences: AsyncIterable<string>,
  queue: UnitQueue,
  start: StartUnit,
  settings: { language: string | undefined; maxPieceChars: number; signal: AbortSignal },
): Promise<void> {
  const { language, maxPieceChars, signal } = settings;
  const input = sentences[Symbol.asyncIterator]();
  try {
    for (let sentence = 0; ; sentence++) {
      const next = await abortable(input.next(), signal);
      if (next.done === true) break;
      const pieces = splitForSpeech(speakable(next.value, language), maxPieceChars);
      for (const [i, piece] of pieces.entries()) {
        await abortable(queue.slot(), signal);
        queue.push(start(piece, sentence, i === pieces.length - 1));
      }
    }
    queue.end();
  } catch (error) {
    queue.fail(error);
  } finally {
    // Tell the source we stopped reading (it may be blocked; do not wait for it).
    if (signal.aborted) input.return?.().catch(() => undefined);
  }
}

/** Units in order, at most `capacity` started and not yet played. */
class UnitQueue {
  readonly started: Unit[] = [];
  readonly #ready: Unit[] = [];
  readonly #capacity: number;
  #inFlight = 0;
  #ended = false;
  #error: { error: unknown } | undefined;
  #wake: (() => void) | undefined;
  #slotWake: (() => void) | undefined;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  async slot(): Promise<void> {
    while (this.#inFlight >= this.#capacity) {
      await new Promise<void>((resolve) => (this.#slotWake = resolve));
    }
    this.#inFlight++;
  }

  release(): void {
    this.#inFlight--;
    this.#slotWake?.();
  }

  push(unit: Unit): void {
    this.started.push(unit);
    this.#ready.push(unit);
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  fail(error: unknown): void {
    this.#error = { error };
    this.end();
  }

  /** The next unit, or undefined once the input has ended; the input's error, in its turn. */
  async take(): Promise<Unit | undefined> {
    for (;;) {
      const unit = this.#ready.shift();
      if (unit !== undefined) return unit;
      if (this.#error !== undefined) throw this.#error.error;
      if (this.#ended) return undefined;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}

/** Waits for engine runs to wind down (processes reaped, files removed, requests closed). */
async function cleanup(units: Unit[], producer: Promise<void>): Promise<void> {
  await producer;
  await Promise.allSettled(
    units
      .filter((unit) => !unit.done)
      .map(async (unit) => {
        await unit.pending.catch(() => undefined);
        await unit.iterator.return?.();
      }),
  );
}

async function withDeadline(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  try {
    await Promise.race([work.catch(() => undefined), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as received
        reject(error);
      },
    );
  });
}
