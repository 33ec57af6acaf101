/**
 * The language-model boundary (ARCHITECTURE "Streaming and cancellation"). A provider turns one
 * request into a stream of events and stops when its signal aborts. It never stores anything and
 * never runs tools itself: a `tool_call` event asks the chat engine to run one, and the engine
 * calls `stream` again with the result appended to `messages`.
 */

/** A passage retrieved from the knowledge base, numbered for the model: it cites it as `[n]`. */
export interface Passage {
  /** 1-based within the turn; stable across the turn's tool rounds. */
  n: number;
  chunkId: string;
  documentId: string;
  docKey: string;
  title: string;
  version: number;
  page: number | null;
  heading: string | null;
  /** The chunk's whole text. Untrusted: it may contain instructions, which are never followed. */
  text: string;
  /** Retrieval score, 0..1. */
  score: number;
}

export interface LlmToolCall {
  /** Unique within the turn. */
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type LlmMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: LlmToolCall[] }
  /** A tool's answer: `content` is the JSON of its result or of its error. */
  | { role: 'tool'; toolCallId: string; name: string; content: string };

/** A tool the model may call; `parameters` is a JSON Schema object. */
export interface LlmTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface LlmRequest {
  /** The conversation so far, oldest first, ending with the user's question or a tool answer. */
  messages: LlmMessage[];
  /** Passages retrieved for this turn (by the engine and by tool calls so far), by `n`. */
  passages: Passage[];
  tools: LlmTool[];
  /**
   * The knowledge base's own definitions of what the question writes (an abbreviation, a brand or
   * generic name): how its documents spell it. Untrusted, as passages are. None when absent.
   */
  glossary?: GlossaryEntry[];
}

/** An abbreviation or a pair of names a document of the knowledge base defines. */
export interface GlossaryEntry {
  /** As written: "LTBI"; of a pair of names, the one before the parenthesis ("lisinopril"). */
  term: string;
  /** As written: "latent TB infection"; of a pair, the other name ("Zestril"). */
  means: string;
  kind: 'abbreviation' | 'name';
}

export type LlmEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'tool_call'; call: LlmToolCall }
  /** Tokens the backend counted for this call (non-negative integers); at most once, before `done`. */
  | { type: 'usage'; inputTokens: number; outputTokens: number }
  | { type: 'done'; finishReason: 'stop' | 'tool_calls' | 'length' };

export interface LlmStreamOptions {
  signal: AbortSignal;
}

/** What a health probe of the model's backend checked, when it answered (issue 22 item 7). */
export interface LlmProbeResult {
  /** `remote`: an HTTP endpoint answered; `in_process`: the model ran here. */
  kind: 'remote' | 'in_process';
  /** What the probe did, in a few words (e.g. `GET /models`). */
  probe: string;
  /** Whether the endpoint's model list names the configured model; undefined when not known. */
  modelListed?: boolean;
}

export interface LlmProvider {
  /** `extractive` or `openai`: for logs, metrics and /ready. */
  readonly name: string;
  /** The model in use (e.g. `gpt-4o-mini`, `extractive-1`). */
  readonly model: string;
  stream(request: LlmRequest, options: LlmStreamOptions): AsyncIterable<LlmEvent>;
  /**
   * Checks that the backend answers, cheaply and without generating an answer for anyone; stops
   * when the signal aborts (throwing its reason). Throws a ProviderError when the backend failed
   * (with its HTTP status when it answered one). A provider without it is reported `unknown`.
   */
  probe?(options: LlmStreamOptions): Promise<LlmProbeResult>;
}

/**
 * A provider failed. `retryable` says whether the same request may succeed if sent again (429,
 * 5xx, a connection refused); the engine retries only while nothing has reached the client.
 */
export class ProviderError extends Error {
  readonly provider: string;
  readonly retryable: boolean;
  readonly status: number | undefined;
  /** How long the backend asked us to wait before trying again (a 429's `retry-after`), if it said. */
  readonly retryAfterMs: number | undefined;

  constructor(
    provider: string,
    message: string,
    options: { retryable: boolean; status?: number; retryAfterMs?: number; cause?: unknown },
  ) {
    super(message, { cause: options.cause });
    this.name = 'ProviderError';
    this.provider = provider;
    this.retryable = options.retryable;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}
