import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { EmbeddingsProviderError } from './errors.js';
import type { EmbeddingsProvider } from './types.js';

/**
 * Any OpenAI-compatible embeddings endpoint (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp
 * server, ...) through the `openai` SDK: POST {baseUrl}/embeddings with `{ model, input: string[],
 * encoding_format, dimensions? }`, answered with `{ object: 'list', data: [{ object: 'embedding',
 * index, embedding }], model, usage }`.
 */

export interface OpenAiEmbeddingsOptions {
  /** e.g. https://api.openai.com/v1 or http://localhost:11434/v1 */
  baseUrl: string;
  apiKey: string;
  model: string;
  /**
   * Vector size. When given it is also sent as `dimensions` (models that can shorten their output,
   * such as text-embedding-3-*); when absent it must be a model listed in KNOWN_DIMENSIONS.
   */
  dimensions?: number;
  /** Inputs per request; OpenAI accepts up to 2048, self-hosted servers often far fewer. */
  batchSize?: number;
  /** Per request. */
  timeoutMs?: number;
  /** For tests: the SDK's fetch. */
  fetch?: typeof fetch;
}

const KNOWN_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

const PROVIDER = 'openai';

export class OpenAiEmbeddings implements EmbeddingsProvider {
  readonly model: string;
  readonly dimensions: number;
  readonly #client: OpenAI;
  readonly #apiModel: string;
  readonly #sendDimensions: boolean;
  readonly #batchSize: number;
  readonly #apiKey: string;

  constructor(options: OpenAiEmbeddingsOptions) {
    const dimensions = options.dimensions ?? KNOWN_DIMENSIONS[options.model];
    if (dimensions === undefined) {
      throw new RangeError(
        `embeddings: the dimensions of model "${options.model}" are unknown; configure them`,
      );
    }
    this.dimensions = dimensions;
    this.#apiModel = options.model;
    this.#sendDimensions = options.dimensions !== undefined;
    this.#batchSize = options.batchSize ?? 64;
    this.#apiKey = options.apiKey;
    // Vectors of one model name at another size are different vectors: the size is in the name.
    this.model = `${options.model}@${dimensions}`;
    this.#client = new OpenAI({
      baseURL: options.baseUrl,
      apiKey: options.apiKey,
      // Retries belong to the caller's policy, which sees `retryable` on the error.
      maxRetries: 0,
      timeout: options.timeoutMs ?? 30_000,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
  }

  async embed(
    texts: readonly string[],
    options: { signal?: AbortSignal } = {},
  ): Promise<Float32Array[]> {
    const empty = texts.findIndex((t) => t.trim() === '');
    if (empty !== -1) {
      // The OpenAI API rejects empty inputs; say so before spending a request on it.
      throw new EmbeddingsProviderError(PROVIDER, `input ${empty} is empty`, false);
    }
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.#batchSize) {
      const batch = texts.slice(start, start + this.#batchSize);
      vectors.push(...(await this.#embedBatch(batch, options.signal)));
    }
    return vectors;
  }

  async #embedBatch(batch: string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    let response: OpenAI.CreateEmbeddingResponse;
    try {
      response = await this.#client.embeddings.create(
        {
          model: this.#apiModel,
          input: batch,
          // Asked for explicitly so the SDK hands the payload over undecoded: servers that ignore
          // the field answer with number arrays, which the SDK's own decoding would garble.
          encoding_format: 'base64',
          ...(this.#sendDimensions ? { dimensions: this.dimensions } : {}),
        },
        signal === undefined ? {} : { signal },
      );
    } catch (error) {
      throw mapError(error, signal, this.#apiKey);
    }
    return this.#readVectors(response, batch.length);
  }

  #readVectors(response: OpenAI.CreateEmbeddingResponse, expected: number): Float32Array[] {
    const data: unknown = (response as { data?: unknown }).data;
    if (!Array.isArray(data) || data.length !== expected) {
      throw malformed(`expected ${expected} embeddings`);
    }
    const vectors = new Array<Float32Array | undefined>(expected);
    for (const item of data as unknown[]) {
      const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected) {
        throw malformed('embedding index out of range');
      }
      const vector = decodeEmbedding(embedding);
      if (vector.length !== this.dimensions) {
        throw malformed(`embedding has ${vector.length} dimensions, expected ${this.dimensions}`);
      }
      vectors[index] = normaliseInPlace(vector);
    }
    return vectors.map((v) => v ?? throwMalformed('an embedding index is missing'));
  }
}

/** Base64 of little-endian float32 (what OpenAI sends for `encoding_format: 'base64'`), or numbers. */
export function decodeEmbedding(embedding: unknown): Float32Array {
  if (typeof embedding === 'string') {
    const bytes = Buffer.from(embedding, 'base64');
    if (bytes.length % 4 !== 0) throw malformed('base64 embedding is not float32');
    const vector = new Float32Array(bytes.length / 4);
    for (let i = 0; i < vector.length; i += 1) vector[i] = bytes.readFloatLE(i * 4);
    return vector;
  }
  if (isNumberArray(embedding)) return Float32Array.from(embedding);
  throw malformed('embedding is neither base64 nor an array of numbers');
}

function isNumberArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((x) => typeof x === 'number');
}

function normaliseInPlace(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const v of vector) sum += v * v;
  if (!Number.isFinite(sum) || sum === 0) throw malformed('embedding is zero or not finite');
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i += 1) vector[i] = (vector[i] ?? 0) * inv;
  return vector;
}

function malformed(detail: string): EmbeddingsProviderError {
  return new EmbeddingsProviderError(PROVIDER, `malformed embeddings response: ${detail}`, false);
}

function throwMalformed(detail: string): never {
  throw malformed(detail);
}

/** Turns what the SDK throws into an abort (as the caller asked) or a classified provider error. */
export function mapError(error: unknown, signal: AbortSignal | undefined, apiKey: string): unknown {
  if (signal?.aborted === true || error instanceof APIUserAbortError) {
    return signal?.reason ?? new DOMException('The operation was aborted', 'AbortError');
  }
  if (error instanceof APIConnectionError) {
    // Timeouts are a subclass: both are worth another try.
    return new EmbeddingsProviderError(
      PROVIDER,
      'embeddings backend unreachable or timed out',
      true,
    );
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const headers = error.headers as Headers | undefined;
    return statusError(error.status, error.message, headers, apiKey);
  }
  return error;
}

function statusError(
  status: number,
  upstream: string,
  headers: Headers | undefined,
  apiKey: string,
): EmbeddingsProviderError {
  const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
  let detail: string;
  if (status === 401 || status === 403) {
    // The upstream text may quote part of the key ("Incorrect API key provided: sk-ab***"): drop it.
    detail = 'authentication rejected; check the embeddings API key';
  } else {
    detail = redact(upstream, apiKey);
  }
  const retryAfter = retryAfterMs(headers?.get('retry-after') ?? null);
  return new EmbeddingsProviderError(
    PROVIDER,
    `embeddings request failed with HTTP ${status}: ${detail}`,
    retryable,
    status,
    retryAfter,
  );
}

function redact(message: string, apiKey: string): string {
  const text = apiKey === '' ? message : message.split(apiKey).join('[redacted]');
  return text.replace(/\b(sk|key|token)-[A-Za-z0-9_*-]{4,}/g, '[redacted]').slice(0, 300);
}

function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
