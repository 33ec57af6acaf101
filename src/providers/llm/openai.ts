import type OpenAI from 'openai';
import { APIError, APIUserAbortError } from 'openai';
import { openAiClient } from '../openai-client.js';
import { Watchdog } from '../watchdog.js';
import { ChunkAssembler } from './openai-chunks.js';
import { timedOut, toProviderError } from './openai-errors.js';
import { buildMessages, buildTools } from './prompt.js';
import type { LlmEvent, LlmProvider, LlmRequest, LlmStreamOptions } from './types.js';

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

function refusedStreamOptions(error: unknown): boolean {
  return error instanceof APIError && error.status === 400 && /stream_options/i.test(error.message);
}
