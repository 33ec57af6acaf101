import { ProviderError } from '../llm/types.js';
import { AsyncInbox } from './async-inbox.js';
import type { AdaptedModel } from './pocketsphinx-binding.js';
import { DecoderPool, type PoolStats } from './pocketsphinx-pool.js';
import type { Slot, UtteranceEvent } from './pocketsphinx-slot.js';
import {
  STT_SAMPLE_RATE,
  type SttOptions,
  type SttProvider,
  type TranscriptEvent,
} from './types.js';

export type { AdaptedModel } from './pocketsphinx-binding.js';

/**
 * The offline speech recogniser: PocketSphinx (Debian's libpocketsphinx.so.3 through koffi) with
 * the generic en-us models, optionally interpolated with a language model adapted to the
 * knowledge base. Decoding runs on worker threads, never on the caller's: a small pool of
 * threads, each with one decoder built at start-up (~0.3 s) and reused utterance after utterance.
 *
 * - Audio is decoded while it arrives; `partial` events follow the hypothesis whenever it changes,
 *   at most every `partialIntervalMs`; one `final` follows the end of the input ('' for silence).
 * - An utterance waits for a free decoder in a bounded queue for a bounded time; then it fails
 *   with a retryable ProviderError.
 * - Aborting stops feeding, drops the utterance (the decoder goes back to the pool) and the stream
 *   throws the signal's reason, without a final. Stopping the iteration early does the same.
 * - A decoder thread that dies (or stalls past `answerTimeoutMs`) fails its utterance with a
 *   retryable ProviderError and is replaced.
 */

export interface PocketSphinxOptions {
  /** Decoder threads (each holds one decoder, ~100 MB of models); default 2. */
  poolSize?: number | undefined;
  /** Utterances that may wait for a decoder; default 4 per decoder. */
  maxQueue?: number | undefined;
  /** Longest wait for a decoder; default 5 s. */
  acquireTimeoutMs?: number | undefined;
  /** Longest wait for a final after the input ends (or an abort, or a model load); default 15 s. */
  answerTimeoutMs?: number | undefined;
  /** Least time between two partials; default 200 ms. */
  partialIntervalMs?: number | undefined;
  /** Longest utterance; longer input fails with a ProviderError; default 60 s. */
  maxUtteranceMs?: number | undefined;
  /** Holds `en-us/` (acoustic model), `en-us.lm.bin` and `cmudict-en-us.dict`. */
  modelDir?: string | undefined;
  /** A knowledge-base language model interpolated with the generic one from the start. */
  adaptedModel?: AdaptedModel | undefined;
  /** Called after each final, for metrics (never with a transcript). */
  onUtterance?: ((metrics: UtteranceMetrics) => void) | undefined;
}

export interface UtteranceMetrics {
  /** The utterance's audio. */
  audioMs: number;
  /** Time the decoder spent on it (feeding and ending); decodeMs / audioMs is the real-time factor. */
  decodeMs: number;
  /** Time the decoder spent ending it (the second pass): most of the wait for the final. */
  endMs: number;
}

export const DEFAULT_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

export class PocketSphinxSttProvider implements SttProvider {
  readonly name = 'pocketsphinx';
  readonly #pool: DecoderPool;
  readonly #answerTimeoutMs: number;
  readonly #maxSamples: number;
  readonly #onUtterance: ((metrics: UtteranceMetrics) => void) | undefined;

  constructor(options: PocketSphinxOptions = {}) {
    const size = options.poolSize ?? 2;
    if (!Number.isInteger(size) || size < 1) throw new RangeError('poolSize must be at least 1');
    if (options.adaptedModel !== undefined) checkModel(options.adaptedModel);
    const dir = options.modelDir ?? DEFAULT_MODEL_DIR;
    this.#answerTimeoutMs = options.answerTimeoutMs ?? 15_000;
    this.#onUtterance = options.onUtterance;
    this.#maxSamples = ((options.maxUtteranceMs ?? 60_000) / 1000) * STT_SAMPLE_RATE;
    this.#pool = new DecoderPool({
      size,
      maxQueue: options.maxQueue ?? size * 4,
      acquireTimeoutMs: options.acquireTimeoutMs ?? 5_000,
      answerTimeoutMs: this.#answerTimeoutMs,
      partialIntervalMs: options.partialIntervalMs ?? 200,
      paths: {
        acousticModel: `${dir}/en-us`,
        languageModel: `${dir}/en-us.lm.bin`,
        dictionary: `${dir}/cmudict-en-us.dict`,
      },
      adapted: options.adaptedModel ?? null,
    });
  }

  /** Resolves when every decoder is built; rejects (ProviderError) if one cannot be. */
  ready(): Promise<void> {
    return this.#pool.ready();
  }

  stats(): PoolStats {
    return this.#pool.stats();
  }

  /**
   * Interpolates `model` (an ARPA file; its words must be in the dictionary) with the generic
   * language model in every decoder, each between two utterances; `null` goes back to the generic
   * model. Resolves when every decoder has it. `weight` is the adapted model's share, 0 < w < 1:
   * the generic model is never replaced. A model that cannot be loaded rejects with a
   * ProviderError, and every decoder goes back to the generic model.
   */
  setAdaptedModel(model: AdaptedModel | null): Promise<void> {
    if (model !== null) checkModel(model);
    return this.#pool.setAdaptedModel(model === null ? null : { ...model });
  }

  async *transcribe(
    audio: AsyncIterable<Buffer>,
    options: SttOptions,
  ): AsyncIterable<TranscriptEvent> {
    const { signal } = options;
    checkLanguage(options.language);
    signal.throwIfAborted();
    const slot = await this.#pool.acquire(signal);
    const inbox = new AsyncInbox<
      UtteranceEvent | { type: 'abort' } | { type: 'input'; error: unknown }
    >();
    const utterance = { ended: false };
    const id = slot.begin((event) => {
      // Set here, not where the event is read: the decoder is back in the pool from this moment.
      if (event.type !== 'partial') utterance.ended = true;
      inbox.push(event);
    });
    const feeding = { stopped: false, samples: 0 };
    const onAbort = () => {
      inbox.push({ type: 'abort' });
    };
    signal.addEventListener('abort', onAbort, { once: true });
    void this.#feed(audio, slot, id, feeding, (error) => {
      inbox.push({ type: 'input', error });
    });
    try {
      for (;;) {
        const event = await inbox.next();
        if (event.type === 'abort') throw signal.reason;
        if (event.type === 'input') throw event.error;
        if (event.type === 'failed') {
          throw new ProviderError(this.name, `speech recognition failed: ${event.message}`, {
            retryable: event.crashed,
          });
        }
        if (event.type === 'final') {
          const { decodeMs, endMs } = event;
          this.#onUtterance?.({
            audioMs: (feeding.samples / STT_SAMPLE_RATE) * 1000,
            decodeMs,
            endMs,
          });
        }
        yield { type: event.type, text: event.text };
        if (event.type === 'final') return;
      }
    } finally {
      feeding.stopped = true;
      signal.removeEventListener('abort', onAbort);
      if (!utterance.ended) slot.abort(id, this.#answerTimeoutMs);
    }
  }

  /** Sends the input to the decoder as it arrives, then ends the utterance. */
  async #feed(
    audio: AsyncIterable<Buffer>,
    slot: Slot,
    id: number,
    feeding: { stopped: boolean; samples: number },
    fail: (error: unknown) => void,
  ): Promise<void> {
    const pcm = new PcmFramer();
    try {
      for await (const chunk of audio) {
        if (feeding.stopped) return;
        const frame = pcm.push(chunk);
        feeding.samples += frame.length;
        if (feeding.samples > this.#maxSamples) {
          fail(
            new ProviderError(
              this.name,
              `utterance longer than ${this.#maxSamples / STT_SAMPLE_RATE} s`,
              { retryable: false },
            ),
          );
          return;
        }
        if (frame.length > 0) slot.audio(id, frame);
      }
      if (!feeding.stopped) slot.end(id, this.#answerTimeoutMs);
    } catch (error) {
      if (!feeding.stopped) fail(error);
    }
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  /** Ends one decoder thread at once, as a crash would (for tests). */
  crashForTest(index: number): Promise<void> {
    return this.#pool.crashForTest(index);
  }
}

/** Turns byte buffers of any length into whole PCM16 samples, each in its own ArrayBuffer. */
class PcmFramer {
  #carry: number | null = null;

  push(chunk: Buffer): Int16Array<ArrayBuffer> {
    const total = chunk.length + (this.#carry === null ? 0 : 1);
    const bytes = new Uint8Array(total - (total % 2));
    let offset = 0;
    if (this.#carry !== null && bytes.length > 0) bytes[offset++] = this.#carry;
    bytes.set(chunk.subarray(0, bytes.length - offset), offset);
    this.#carry = total % 2 === 1 ? (chunk.at(-1) ?? this.#carry) : null;
    // PCM16 little-endian, as on every machine this runs on (x86-64, arm64).
    return new Int16Array(bytes.buffer);
  }
}

function checkModel(model: AdaptedModel): void {
  if (typeof model.arpaPath !== 'string' || model.arpaPath === '') {
    throw new RangeError('adaptedModel.arpaPath must name an ARPA file');
  }
  if (!(model.weight > 0 && model.weight < 1)) {
    throw new RangeError('adaptedModel.weight must be between 0 and 1 (exclusive)');
  }
  // What reaches the C dictionary: a lower-case word and CMU phones, nothing else.
  for (const { word, phones } of model.words ?? []) {
    if (!/^[a-z][a-z']{0,62}$/.test(word) || !/^[A-Z]{1,2}( [A-Z]{1,2}){0,62}$/.test(phones)) {
      throw new RangeError('adaptedModel.words must be lower-case words with CMU phones');
    }
  }
}

function checkLanguage(language: string | undefined): void {
  if (language === undefined || /^en(-|$)/i.test(language)) return;
  throw new ProviderError('pocketsphinx', `speech recognition has no model for "${language}"`, {
    retryable: false,
  });
}
