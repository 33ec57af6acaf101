import { randomUUID } from 'node:crypto';
import type OpenAI from 'openai';
import { ProviderError, type LlmEvent, type LlmToolCall } from './types.js';

/**
 * Folds `chat.completion.chunk` objects into `LlmEvent`s.
 *
 * - Text deltas pass straight through (an OpenAI `refusal` delta is text too).
 * - Tool calls arrive in pieces keyed by `index`: the id and name in the first piece, the
 *   arguments spread over many. They are emitted whole, in index order, when the choice finishes.
 * - Arguments that are not a JSON object do not fail the stream: the call is emitted with
 *   `arguments: { _invalid: '<why>' }` (INVALID_ARGUMENTS), so the tool refuses it and the model
 *   reads the refusal and can try again. The raw text is never kept in the event (it may be long).
 * - `usage` may come on its own chunk after the finish (`stream_options.include_usage`), on every
 *   chunk (vLLM's continuous usage), or never (servers that ignore the option); the last one seen
 *   is emitted once, just before `done`. Counts that are not non-negative integers are dropped.
 */

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;
type ToolCallPiece = OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall;
type FinishReason = Extract<LlmEvent, { type: 'done' }>['finishReason'];

/** The key set on a tool call's arguments when the model's arguments were not a JSON object. */
export const INVALID_ARGUMENTS = '_invalid';

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

const PROVIDER = 'openai';

export class ChunkAssembler {
  readonly #calls = new Map<number, PartialCall>();
  #finish: string | undefined;
  #usage: { inputTokens: number; outputTokens: number } | undefined;

  /** The events one chunk yields right away (text; tool calls once the choice has finished). */
  push(chunk: Chunk): LlmEvent[] {
    const usage = (chunk as { usage?: Chunk['usage'] }).usage;
    if (usage !== undefined && usage !== null) {
      const inputTokens = tokenCount(usage.prompt_tokens);
      const outputTokens = tokenCount(usage.completion_tokens);
      // A count that is not a whole number of tokens is not a count: that usage is left out.
      if (inputTokens !== undefined && outputTokens !== undefined) {
        this.#usage = { inputTokens, outputTokens };
      }
    }
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    const choice = choices.find((c) => c.index === 0) ?? choices[0];
    if (choice === undefined || this.#finish !== undefined) return [];
    const events: LlmEvent[] = [];
    const delta = (choice.delta as Chunk['choices'][number]['delta'] | undefined) ?? {};
    for (const text of [delta.content, delta.refusal]) {
      if (typeof text === 'string' && text !== '') events.push({ type: 'text_delta', text });
    }
    delta.tool_calls?.forEach((piece, position) => {
      this.#addPiece(piece, position);
    });
    if (typeof choice.finish_reason === 'string') this.#finish = choice.finish_reason;
    return events;
  }

  /** The events that close the stream: tool calls, usage, done; or why it cannot close. */
  finish(): LlmEvent[] {
    if (this.#finish === undefined) {
      throw new ProviderError(PROVIDER, 'the stream ended before the answer finished', {
        retryable: true,
      });
    }
    if (this.#finish === 'content_filter') {
      throw new ProviderError(PROVIDER, "the endpoint's content filter stopped the answer", {
        retryable: false,
      });
    }
    const reason = this.#reason(this.#finish);
    // Cut off by the token limit, the last call's arguments are cut off too: none is run.
    const calls: LlmEvent[] =
      reason === 'length'
        ? []
        : [...this.#calls.entries()]
            .sort(([a], [b]) => a - b)
            .map(([, call]) => ({ type: 'tool_call', call: completeCall(call) }));
    const usage: LlmEvent[] = this.#usage === undefined ? [] : [{ type: 'usage', ...this.#usage }];
    return [...calls, ...usage, { type: 'done', finishReason: reason }];
  }

  #reason(finish: string): FinishReason {
    if (finish === 'length') return 'length';
    // Some servers (older Ollama, some llama.cpp templates) say `stop` after tool calls.
    if (this.#calls.size > 0) return 'tool_calls';
    return 'stop';
  }

  #addPiece(piece: ToolCallPiece, position: number): void {
    const index = typeof piece.index === 'number' ? piece.index : position;
    let call = this.#calls.get(index);
    if (call === undefined) {
      call = { id: '', name: '', arguments: '' };
      this.#calls.set(index, call);
    }
    if (typeof piece.id === 'string' && piece.id !== '' && call.id === '') call.id = piece.id;
    const fn = piece.function;
    if (typeof fn?.name === 'string' && fn.name !== '' && call.name === '') call.name = fn.name;
    if (typeof fn?.arguments === 'string') call.arguments += fn.arguments;
  }
}

function tokenCount(value: unknown): number | undefined {
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined;
}

function completeCall(call: PartialCall): LlmToolCall {
  if (call.name === '') {
    throw new ProviderError(PROVIDER, 'malformed stream: a tool call has no name', {
      retryable: false,
    });
  }
  return {
    // Ollama and some llama.cpp versions send no id; the engine needs one unique in the turn.
    id: call.id === '' ? `call_${randomUUID()}` : call.id,
    name: call.name,
    arguments: parseArguments(call.arguments),
  };
}

/** Whether a tool call's arguments were unusable (see INVALID_ARGUMENTS). */
export function hasInvalidArguments(call: LlmToolCall): boolean {
  return Object.hasOwn(call.arguments, INVALID_ARGUMENTS);
}

/** A JSON object, `{}` for no text at all, or `{ _invalid: why }`. */
export function parseArguments(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { [INVALID_ARGUMENTS]: 'the arguments were not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { [INVALID_ARGUMENTS]: 'the arguments were not a JSON object' };
  }
  return value as Record<string, unknown>;
}
