import type {
  GlossaryEntry,
  LlmMessage,
  LlmProvider,
  LlmToolCall,
  Passage,
} from '../../providers/llm/types.js';
import { ProviderError } from '../../providers/llm/types.js';
import { hasInvalidArguments, INVALID_ARGUMENTS } from '../../providers/llm/index.js';
import { streamWithRetry } from '../../providers/llm/retry.js';
import type { ToolCallDto, UsageDto } from '../conversations/schema.js';
import { CitationMarkers } from './citations.js';
import type { AnswerFrame } from './protocol.js';
import { addUsage } from './usage.js';
import { ToolError, type Tool } from './tools/types.js';
import { abortable } from '../../platform/abortable.js';

/** Bounds of one turn. */
export interface TurnLimits {
  /** Model rounds that may ask for tools; the round after the last must answer. */
  maxToolRounds: number;
  toolTimeoutMs: number;
  retryAttempts: number;
  retryBackoffMs: number;
}

export const TURN_LIMITS: TurnLimits = {
  maxToolRounds: 5,
  toolTimeoutMs: 10_000,
  retryAttempts: 3,
  retryBackoffMs: 250,
};

export interface TurnInput {
  userId: string;
  conversationId: string;
  messageId: string;
  userMessageId: string;
  history: LlmMessage[];
  passages: Passage[];
  /** The knowledge base's definitions of what the question writes (none: empty). */
  glossary?: GlossaryEntry[];
  tools: Tool[];
  signal: AbortSignal;
  /** `performance.now()` when the turn began (the question arrived), for `firstChunkMs`. */
  startedAt?: number;
  /** Sends a frame of this answer (in order). */
  emit(frame: AnswerFrame): void;
}

export interface TurnOutcome {
  content: string;
  citations: ReturnType<CitationMarkers['citations']>;
  toolCalls: ToolCallDto[];
  /** Cancelled, or ended by a provider failure: the answer stops where it was. */
  interrupted: boolean;
  error: ProviderError | undefined;
  /** Milliseconds from `startedAt` to the first chunk, if one went out. */
  firstChunkMs: number | undefined;
  /**
   * The tokens of every model call of the turn that reported usage, summed; null when none did.
   * A call cut short (cancel, failure) reports none: its tokens are not known, so not counted.
   */
  usage: UsageDto | null;
}

/**
 * One assistant turn: the model streams, asks for tools (run here, at most `maxToolRounds` rounds),
 * and its text goes out as `chunk` frames with passage references renumbered as citations. Ends
 * normally, by cancel (the signal) or by a provider failure; the caller stores what it returns.
 */
export async function runTurn(
  llm: LlmProvider,
  input: TurnInput,
  limits: TurnLimits = TURN_LIMITS,
): Promise<TurnOutcome> {
  const started = input.startedAt ?? performance.now();
  const markers = new CitationMarkers(() => input.passages);
  const toolCalls: ToolCallDto[] = [];
  const messages = [...input.history];
  let content = '';
  let index = 0;
  let firstChunkMs: number | undefined;
  let usage: UsageDto | null = null;
  const send = (text: string) => {
    if (text === '') return;
    content += text;
    firstChunkMs ??= performance.now() - started;
    input.emit({
      type: 'chunk',
      conversation_id: input.conversationId,
      message_id: input.messageId,
      user_message_id: input.userMessageId,
      index: index++,
      delta: text,
    });
  };
  const writes: WriteSaid[] = [];
  const finish = (interrupted: boolean, error?: ProviderError): TurnOutcome => {
    if (!interrupted) send(markers.flush());
    // Cut short after a write: the answer still says what was written.
    else send(unsaidWrites(writes, content));
    return {
      content: interrupted ? content : content.trimEnd(),
      citations: markers.citations(),
      toolCalls,
      interrupted,
      error,
      firstChunkMs,
      usage,
    };
  };
  try {
    for (let round = 0; ; round++) {
      const tools = round < limits.maxToolRounds ? input.tools : [];
      const calls: LlmToolCall[] = [];
      let text = '';
      const request = {
        messages,
        passages: input.passages,
        tools: tools.map((t) => t.definition),
        ...(input.glossary === undefined || input.glossary.length === 0
          ? {}
          : { glossary: input.glossary }),
      };
      const events = streamWithRetry(llm, request, {
        signal: input.signal,
        attempts: content === '' ? limits.retryAttempts : 1,
        backoffMs: limits.retryBackoffMs,
      });
      for await (const event of events) {
        if (event.type === 'text_delta') {
          text += event.text;
          send(markers.push(event.text));
        } else if (event.type === 'tool_call') calls.push(event.call);
        else if (event.type === 'usage') usage = addUsage(usage, llm, event);
      }
      if (calls.length === 0 || tools.length === 0) break;
      messages.push({ role: 'assistant', content: text, toolCalls: calls });
      for (const call of calls) {
        const record = await runTool(input, tools, call, limits.toolTimeoutMs);
        toolCalls.push(record);
        const sentence = writeSentence(tools, record);
        if (sentence !== undefined) writes.push({ sentence, from: content.length });
        messages.push({
          role: 'tool',
          toolCallId: call.id,
          name: call.name,
          content: JSON.stringify(record.error === null ? record.result : { error: record.error }),
        });
      }
    }
  } catch (err) {
    if (input.signal.aborted) return finish(true);
    if (err instanceof ProviderError) return finish(true, err);
    throw err;
  }
  return finish(input.signal.aborted);
}

/** Runs one tool call with its frames; a failure is recorded, never thrown. */
async function runTool(
  input: TurnInput,
  tools: readonly Tool[],
  call: LlmToolCall,
  timeoutMs: number,
): Promise<ToolCallDto> {
  const record: ToolCallDto = {
    id: call.id,
    name: call.name,
    arguments: call.arguments,
    result: null,
    error: null,
    durationMs: 0,
  };
  const frame = (type: 'tool_call' | 'tool_result') => {
    input.emit({
      type,
      conversation_id: input.conversationId,
      message_id: input.messageId,
      call: { ...record },
    });
  };
  frame('tool_call');
  const started = performance.now();
  const tool = tools.find((t) => t.definition.name === call.name);
  let sent = false;
  try {
    if (tool === undefined) throw new ToolError(`Unknown tool ${call.name}`);
    // The provider marks arguments it could not parse; no tool is run on them.
    if (hasInvalidArguments(call)) throw new ToolError(String(call.arguments[INVALID_ARGUMENTS]));
    // A call the turn was cancelled before reaching is not started: a write not sent is not made.
    input.signal.throwIfAborted();
    const context = { userId: input.userId, turnId: input.userMessageId, toolCallId: call.id };
    if (tool.writes === true) {
      // Never cancelled once sent (issue 13): awaited to its end whatever happens to the turn,
      // so the stored call says what was written. The tool bounds its own time.
      sent = true;
      const never = new AbortController().signal;
      record.result = await tool.run(call.arguments, { ...context, signal: never });
    } else {
      const signal = AbortSignal.any([input.signal, AbortSignal.timeout(timeoutMs)]);
      record.result = await abortable(tool.run(call.arguments, { ...context, signal }), signal);
    }
  } catch (err) {
    record.error = toolError(err, input.signal.aborted && !sent);
  }
  record.durationMs = Math.round(performance.now() - started);
  frame('tool_result');
  return record;
}

/** `cancelled`: the turn's cancel cut the call short (never the case for a write once sent). */
function toolError(err: unknown, cancelled: boolean): { code: string; message: string } {
  if (err instanceof ToolError) return { code: err.code, message: err.message };
  if (cancelled) return { code: 'TOOL_ERROR', message: 'Cancelled' };
  if (err instanceof DOMException && err.name === 'TimeoutError') {
    return { code: 'TOOL_ERROR', message: 'The tool took too long' };
  }
  return { code: 'TOOL_ERROR', message: 'The tool failed' };
}

/** A write's sentence, and how much of the answer had gone out when its result came. */
interface WriteSaid {
  sentence: string;
  from: number;
}

/** What a successful write did, in the tool's words, if it is a write tool that says. */
function writeSentence(tools: readonly Tool[], record: ToolCallDto): string | undefined {
  const tool = tools.find((t) => t.definition.name === record.name);
  if (tool?.writes !== true || record.result === null || record.error !== null) return undefined;
  return tool.describe?.(record.result);
}

/** The sentences of the writes the answer has not stated since their results came, as a delta. */
function unsaidWrites(writes: readonly WriteSaid[], content: string): string {
  const unsaid = writes.filter((w) => !content.slice(w.from).includes(w.sentence));
  if (unsaid.length === 0) return '';
  const text = unsaid.map((w) => w.sentence).join(' ');
  return content === '' || /\s$/.test(content) ? text : ` ${text}`;
}
