import { openAiClient } from '../openai-client.js';
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { ProviderError } from '../llm/types.js';
import { toProviderError } from './openai-errors.js';
import {
  STT_SAMPLE_RATE,
  type SttOptions,
  type SttProvider,
  type TranscriptEvent,
} from './types.js';
import { bufferToInt16 } from '../../platform/audio/pcm.js';
import { encodeWav } from '../../platform/audio/wav.js';

/**
 * Any OpenAI-compatible transcription endpoint (OpenAI, Azure OpenAI, faster-whisper-server,
 * whisper.cpp server, vLLM) through the `openai` SDK: POST {baseUrl}/audio/transcriptions, a
 * multipart form with the utterance as a WAV file, `model`, `response_format: json` and
 * `language` when known, answered with `{ "text": ... }`.
 *
 * - The utterance is collected (at most `maxUtteranceMs`, 30 s at most, which is what the
 *   endpoints accept in one request) and sent when the input ends; one `final`, no partials.
 * - Less than 100 ms of audio (the endpoints refuse it) is answered with a final '' unsent.
 * - Aborting the signal stops reading or aborts the request; the stream throws the signal's
 *   reason. `timeoutMs` bounds the request (a non-retryable ProviderError "timed out"); 429, 5xx
 *   and connection failures are retryable ProviderErrors. The SDK never retries itself.
 */

export interface OpenAiSttOptions {
  /** e.g. https://api.openai.com/v1, http://localhost:8000/v1 */
  baseUrl: string;
  /** Unset for local servers that need none: then no Authorization header is sent. */
  apiKey?: string | undefined;
  /** Default `whisper-1`. */
  model?: string | undefined;
  /** Longest wait for the answer; default 30 s. */
  timeoutMs?: number | undefined;
  /** Default language (BCP 47, e.g. `en-US`) when the call names none. */
  language?: string | undefined;
  /** Longest utterance, up to the default and maximum of 30 s. */
  maxUtteranceMs?: number | undefined;
  /** For tests: the SDK's fetch. */
  fetch?: typeof fetch | undefined;
}

const MAX_UTTERANCE_MS = 30_000;
const MIN_UTTERANCE_BYTES = (STT_SAMPLE_RATE * 2) / 10;

export class OpenAiSttProvider implements SttProvider {
  readonly name = 'openai';
  readonly model: string;
  readonly #client: OpenAI;
  readonly #apiKey: string;
  readonly #language: string | undefined;
  readonly #maxBytes: number;
  readonly #timeoutMs: number;

  constructor(options: OpenAiSttOptions) {
    this.model = options.model ?? 'whisper-1';
    this.#apiKey = options.apiKey ?? '';
    this.#language = options.language;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    const maxMs = Math.min(options.maxUtteranceMs ?? MAX_UTTERANCE_MS, MAX_UTTERANCE_MS);
    this.#maxBytes = Math.floor((maxMs / 1000) * STT_SAMPLE_RATE) * 2;
    this.#client = openAiClient({
      baseUrl: options.baseUrl,
      apiKey: this.#apiKey,
      timeoutMs: this.#timeoutMs,
      fetch: options.fetch,
    });
  }

  async *transcribe(
    audio: AsyncIterable<Buffer>,
    options: SttOptions,
  ): AsyncIterable<TranscriptEvent> {
    const { signal } = options;
    signal.throwIfAborted();
    const pcm = await collect(audio, signal, this.#maxBytes);
    if (pcm.length < MIN_UTTERANCE_BYTES) {
      yield { type: 'final', text: '' };
      return;
    }
    const language = isoLanguage(options.language ?? this.#language);
    let text: string;
    try {
      const file = await toFile(encodeWav(bufferToInt16(pcm), STT_SAMPLE_RATE), 'utterance.wav', {
        type: 'audio/wav',
      });
      const answer = await this.#client.audio.transcriptions.create(
        {
          file,
          model: this.model,
          response_format: 'json',
          ...(language === undefined ? {} : { language }),
        },
        { signal },
      );
      text = typeof answer.text === 'string' ? answer.text : '';
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw toProviderError(error, this.#apiKey);
    }
    yield { type: 'final', text: text.trim() };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** `en-US` -> `en`: the endpoints take ISO 639-1 codes. */
function isoLanguage(tag: string | undefined): string | undefined {
  const primary = tag?.split('-')[0]?.toLowerCase();
  return primary === undefined || primary === '' ? undefined : primary;
}

/** The whole input, or the signal's reason as soon as it aborts, or a ProviderError if too long. */
async function collect(
  audio: AsyncIterable<Buffer>,
  signal: AbortSignal,
  maxBytes: number,
): Promise<Buffer> {
  const iterator = audio[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let bytes = 0;
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => undefined);
  let done = false;
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next.done === true) break;
      bytes += next.value.length;
      if (bytes > maxBytes) {
        throw new ProviderError(
          'openai',
          `utterance longer than ${maxBytes / 2 / STT_SAMPLE_RATE} s`,
          {
            retryable: false,
          },
        );
      }
      chunks.push(next.value);
    }
    done = true;
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (!done) Promise.resolve(iterator.return?.()).catch(() => undefined);
  }
  return Buffer.concat(chunks, bytes);
}
