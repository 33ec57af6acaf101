import type { LlmTool } from '../../../providers/llm/types.js';

/** What a tool runs for: the caller, the turn, and its signal (cancel stops the tool too). */
export interface ToolContext {
  userId: string;
  signal: AbortSignal;
  /**
   * The user message the turn answers: the same when the turn is generated again, so a tool that
   * writes elsewhere can make a repeated write harmless.
   */
  turnId?: string;
  /** The model's id of this call. */
  toolCallId?: string;
}

/**
 * A tool the chat engine can run when the model asks (`tool_call`). `run` validates its arguments
 * itself (they come from a model: hostile until checked) and either returns a JSON object or
 * throws `ToolError`; any other exception is a bug and is reported as an internal tool failure.
 */
export interface Tool {
  definition: LlmTool;
  run(args: Record<string, unknown>, context: ToolContext): Promise<Record<string, unknown>>;
  /**
   * The tool writes elsewhere (the EHR). Once started, a cancel (message_cancel, barge-in) does
   * not stop it, nor does the engine's tool timeout: the engine awaits its result and stores it,
   * so what was written is known. Its signal never aborts; `run` bounds its own time.
   */
  writes?: boolean;
  /**
   * A sentence stating what a successful call did ("Recorded heart rate 72 /min for patient …"):
   * ends an answer cut short after the call, so the stored answer says what was written.
   */
  describe?(result: Record<string, unknown>): string | undefined;
}

/** A tool refused its arguments or could not answer: recorded as `{ code: 'TOOL_ERROR', message }`. */
export class ToolError extends Error {
  readonly code = 'TOOL_ERROR';

  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}
