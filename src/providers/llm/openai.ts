import type OpenAI from 'openai';
import { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { openAiClient } from '../openai-client.js';
import { knownFailure } from '../openai-errors.js';
import { Watchdog } from '../watchdog.js';
import { ChunkAssembler } from './openai-chunks.js';
import { timedOut, toProviderError } from './openai-errors.js';
import { buildMessages, buildTools } from './prompt.js';
import {
  ProviderError,
  type LlmEvent,
  type LlmProbeResult,
  type LlmProvider,
  type LlmRequest,
  type LlmStreamOptions,
} from './types.js';

/**
 * Any OpenAI-compatible chat-completions endpoint (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp
 * server) through the `openai` SDK, streaming: POST {baseUrl}/chat/completions with
 * `{ model, messages, tools?, stream: true, stream_options: { include_usage: true } }`, answered
 * with server-sent `chat.completion.chunk` events and `data: [DONE]`.
 *
 * - The SDK never retries (`maxRetries: 0`): retries live in `streamWithRetry` (retry.ts).
 * - A stall timer covers the wait for the first chunk and every gap between chunks (not the time
 *   the caller spends on an event): after `timeoutMs` without data the request is aborted and the
 *   stream fails with a non-retryable ProviderError "timed out".
 * - Aborting the caller's signal aborts the HTTP request; the stream then throws the signal's
 *   reason (an AbortError unless the caller gave another), never a ProviderError.
 * - A server that refuses `stream_options` (HTTP 400 naming it) is asked once more without it,
 *   and this instance stops sending it.
 * - `probe` lists the endpoint's models (GET {baseUrl}/models, same key), which every compatible
 *   server answers without running a model: the health check of the operator port.
 */

export interface OpenAiLlmOptions {
  /** e.g. https://api.openai.com/v1, http://localhost:11434/v1 (Ollama), http://vllm:8000/v1 */
  baseUrl: string;
  /** Unset for local servers that need none: then no Authorization header is sent. */
  apiKey?: string | undefined;
  model: string;
  /** Longest wait for the first chunk and between chunks; default 30 s. */
  timeoutMs?: number | undefined;
  /** Sent as `max_tokens` (the name every compatible server understands). */
  maxTokens?: number | undefined;
  temperature?: number | undefined;
  /** Ask for a final usage chunk; default true. */
  includeUsage?: boolean | undefined;
  /** For tests: the SDK's fetch. */
  fetch?: typeof fetch | undefined;
}

type StreamParams = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

export class OpenAiLlmProvider implements LlmProvider {
  readonly name = 'openai';
  readonly model: string;
  readonly #client: OpenAI;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #maxTokens: number | undefined;
  readonly #temperature: number | undefined;
  #includeUsage: boolean;

  constructor(options: OpenAiLlmOptions) {
    this.model = options.model;
    this.#apiKey = options.apiKey ?? '';
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#maxTokens = options.maxTokens;
    this.#temperature = options.temperature;
    this.#includeUsage = options.includeUsage ?? true;
    this.#client = openAiClient({
      baseUrl: options.baseUrl,
      apiKey: this.#apiKey,
      timeoutMs: this.#timeoutMs,
      fetch: options.fetch,
    });
  }

  async *stream(request: LlmRequest, options: LlmStreamOptions): AsyncIterable<LlmEvent> {
    const { signal } = options;
    signal.throwIfAborted();
    const watchdog = new Watchdog(this.#timeoutMs, signal);
    try {
      const chunks = await this.#open(request, watchdog);
      const assembler = new ChunkAssembler();
      for await (const chunk of chunks) {
        watchdog.pause();
        for (const event of assembler.push(chunk)) yield event;
        watchdog.arm();
      }
      // The SDK ends the iteration quietly when the request is aborted: say why it ended.
      watchdog.throwIfFired();
      watchdog.pause();
      for (const event of assembler.finish()) yield event;
    } catch (error) {
      throw this.#failure(error, watchdog);
    } finally {
      watchdog.dispose();
    }
  }

  async probe(options: LlmStreamOptions): Promise<LlmProbeResult> {
    const { signal } = options;
    signal.throwIfAborted();
    let page;
    let status;
    try {
      const listed = await this.#client.models.list({ signal }).withResponse();
      page = listed.data;
      status = listed.response.status;
    } catch (error) {
      if (signal.aborted || error instanceof APIUserAbortError) throw abortReason(signal);
      throw probeFailure(error, this.#apiKey);
    }
    if (page.object !== 'list' || !Array.isArray(page.data)) {
      throw new ProviderError(PROVIDER, 'GET /models answered, but not with a list of models', {
        retryable: false,
        status,
      });
    }
    const modelListed = page.data.some((m) => (m as { id?: unknown }).id === this.model);
    return { kind: 'remote', probe: 'GET /models', modelListed };
  }

  async #open(request: LlmRequest, watchdog: Watchdog): Promise<AsyncIterable<Chunk>> {
    watchdog.arm();
    try {
      return await this.#create(request, watchdog.signal);
    } catch (error) {
      if (!this.#includeUsage || !refusedStreamOptions(error)) throw error;
      this.#includeUsage = false;
      watchdog.arm();
      return await this.#create(request, watchdog.signal);
    }
  }

  #create(request: LlmRequest, signal: AbortSignal): Promise<AsyncIterable<Chunk>> {
    const params: StreamParams = {
      model: this.model,
      messages: buildMessages(request),
      stream: true,
      ...(this.#includeUsage ? { stream_options: { include_usage: true } } : {}),
      // An empty `tools` array is an error on some servers: leave it out.
      ...(request.tools.length > 0 ? { tools: buildTools(request.tools) } : {}),
      // `max_tokens`, not `max_completion_tokens`: Ollama and llama.cpp know only the older name.
      // eslint-disable-next-line @typescript-eslint/no-deprecated
      ...(this.#maxTokens === undefined ? {} : { max_tokens: this.#maxTokens }),
      ...(this.#temperature === undefined ? {} : { temperature: this.#temperature }),
    };
    return this.#client.chat.completions.create(params, { signal });
  }

  #failure(error: unknown, watchdog: Watchdog): unknown {
    if (watchdog.fired) return timedOut(this.#timeoutMs);
    if (watchdog.callerAborted || error instanceof APIUserAbortError) {
      return watchdog.abortReason();
    }
    return toProviderError(error, this.#apiKey);
  }
}

const PROVIDER = 'openai';

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** The listing's failure as a ProviderError; an unreachable endpoint says why (e.g. ECONNREFUSED). */
function probeFailure(error: unknown, apiKey: string): ProviderError {
  const known = knownFailure(error, apiKey, 'model listing');
  if (known === undefined) {
    return new ProviderError(PROVIDER, 'GET /models failed: the answer could not be read', {
      retryable: false,
    });
  }
  const code = error instanceof APIConnectionError ? errorCode(error) : undefined;
  if (code === undefined) return known;
  return new ProviderError(PROVIDER, `${known.message} (${code})`, { retryable: known.retryable });
}

/** A system error code (ECONNREFUSED, ENOTFOUND, …) somewhere in the error's causes. */
function errorCode(error: unknown): string | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
  }
  return undefined;
}

function refusedStreamOptions(error: unknown): boolean {
  return error instanceof APIError && error.status === 400 && /stream_options/i.test(error.message);
}
