import type OpenAI from 'openai';
import { bufferToInt16 } from '../../platform/audio/pcm.js';
import { StreamingResampler } from '../../platform/audio/resample.js';
import { ProviderError } from '../llm/types.js';
import { openAiClient } from '../openai-client.js';
import { Watchdog } from '../watchdog.js';
import { wavToPcm } from './local-engine.js';
import { speechError, speechTimedOut } from './openai-errors.js';
import { synthesizeInPieces, type SpeakContext } from './pipeline.js';
import type { AudioChunk, TtsOptions, TtsProvider } from './types.js';

/**
 * Any OpenAI-compatible speech endpoint through the `openai` SDK: one
 * `POST {baseUrl}/audio/speech` per sentence (or piece of a long one) with
 * `{ model, voice, input, response_format }`.
 *
 * - `pcm` (default): raw PCM16 mono at 24 kHz, streamed: each block of the body is resampled as it
 *   arrives (a streaming resampler keeps the signal continuous across blocks), so the first chunk
 *   goes out before the sentence has been fully generated. `wav`: the whole file, then decoded.
 * - A stall timer covers the wait for the answer and every gap in the body (not the time the
 *   caller holds a chunk): after `timeoutMs` without data the request is aborted and the stream
 *   fails with a non-retryable ProviderError.
 * - The SDK never retries (`maxRetries: 0`); the voice pipeline decides.
 */

const PCM_RATE = 24_000;
/** The endpoint's input limit is 4096 characters. */
const MAX_INPUT = 4000;

export interface OpenAiTtsOptions {
  baseUrl: string;
  /** Unset for local servers that need none: then no Authorization header is sent. */
  apiKey?: string | undefined;
  /** e.g. `tts-1`, `gpt-4o-mini-tts`. */
  model: string;
  /** Default `alloy`. */
  voice?: string | undefined;
  format?: 'pcm' | 'wav' | undefined;
  /** Longest wait for the answer and between blocks of the body; default 10 s. */
  timeoutMs?: number | undefined;
  /** For tests: the SDK's fetch. */
  fetch?: typeof fetch | undefined;
}

export class OpenAiTtsProvider implements TtsProvider {
  readonly name = 'openai';
  readonly #client: OpenAI;
  readonly #apiKey: string;
  readonly #model: string;
  readonly #voice: string;
  readonly #format: 'pcm' | 'wav';
  readonly #timeoutMs: number;

  constructor(options: OpenAiTtsOptions) {
    this.#apiKey = options.apiKey ?? '';
    this.#model = options.model;
    this.#voice = options.voice ?? 'alloy';
    this.#format = options.format ?? 'pcm';
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#client = openAiClient({
      baseUrl: options.baseUrl,
      apiKey: this.#apiKey,
      timeoutMs: this.#timeoutMs,
      fetch: options.fetch,
    });
  }

  synthesize(sentences: AsyncIterable<string>, options: TtsOptions): AsyncIterable<AudioChunk> {
    return synthesizeInPieces(sentences, options, (text, context) => this.#speak(text, context), {
      maxPieceChars: MAX_INPUT,
    });
  }

  async *#speak(text: string, context: SpeakContext): AsyncIterable<Int16Array> {
    context.signal.throwIfAborted();
    const watchdog = new Watchdog(this.#timeoutMs, context.signal);
    try {
      const body = await this.#request(text, context, watchdog);
      if (this.#format === 'wav') {
        const wav = Buffer.from(await new Response(body).arrayBuffer());
        watchdog.pause();
        yield wavToPcm(this.name, wav, context);
        return;
      }
      const resampler = new StreamingResampler(PCM_RATE, context.sampleRate);
      let odd = Buffer.alloc(0);
      for await (const block of body) {
        watchdog.pause();
        const bytes = Buffer.concat([odd, block]);
        odd = bytes.subarray(bytes.length - (bytes.length % 2));
        yield resampler.push(bufferToInt16(bytes));
        watchdog.arm();
      }
      // The SDK's body ends quietly when its request is aborted: say why it ended.
      watchdog.throwIfFired();
      watchdog.pause();
      yield resampler.flush();
    } catch (error) {
      if (watchdog.fired) throw speechTimedOut(this.#timeoutMs);
      if (context.signal.aborted) throw context.signal.reason as Error;
      throw speechError(error, this.#apiKey);
    } finally {
      watchdog.dispose();
    }
  }

  async #request(
    text: string,
    context: SpeakContext,
    watchdog: Watchdog,
  ): Promise<ReadableStream<Uint8Array>> {
    watchdog.arm();
    const params = {
      model: this.#model,
      voice: context.voice ?? this.#voice,
      input: text,
      response_format: this.#format,
    };
    const response = await this.#client.audio.speech.create(params, { signal: watchdog.signal });
    if (response.body === null) {
      throw new ProviderError(this.name, 'speech answer had no body', { retryable: true });
    }
    return response.body;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
