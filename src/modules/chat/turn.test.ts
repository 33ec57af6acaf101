import { describe, expect, it } from 'vitest';
import type { LlmEvent, LlmProvider, LlmRequest } from '../../providers/llm/types.js';
import type { AnswerFrame } from './protocol.js';
import { runTurn, TURN_LIMITS, type TurnInput } from './turn.js';
import type { Tool } from './tools/types.js';

/** Asks for the given calls on the user's question; answers "Done." once tools answered. */
class CallingModel implements LlmProvider {
  readonly name = 'scripted';
  readonly model = 'scripted-1';
  constructor(private readonly names: string[]) {}

  async *stream(request: LlmRequest, options: { signal: AbortSignal }): AsyncIterable<LlmEvent> {
    await Promise.resolve();
    options.signal.throwIfAborted();
    if (request.messages.at(-1)?.role === 'user') {
      for (const [i, name] of this.names.entries()) {
        yield { type: 'tool_call', call: { id: `c${String(i)}`, name, arguments: {} } };
      }
      yield { type: 'done', finishReason: 'tool_calls' };
      return;
    }
    yield { type: 'text_delta', text: 'Done.' };
    yield { type: 'done', finishReason: 'stop' };
  }
}

/** A tool whose run waits until the test lets it finish; counts its runs and signals. */
function heldTool(name: string, writes: boolean) {
  let release: () => void = () => undefined;
  let start: (signal: AbortSignal) => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const started = new Promise<AbortSignal>((resolve) => {
    start = resolve;
  });
  const state = { runs: 0, started, release };
  const tool: Tool = {
    definition: { name, description: name, parameters: {} },
    ...(writes ? { writes: true, describe: () => `Wrote ${name}.` } : {}),
    async run(_args, context) {
      state.runs += 1;
      start(context.signal);
      await released;
      return { id: `${name}-1` };
    },
  };
  return { tool, state };
}

function turn(tools: Tool[], controller: AbortController) {
  const frames: AnswerFrame[] = [];
  const input: TurnInput = {
    userId: 'u1',
    conversationId: 'conv',
    messageId: 'msg',
    userMessageId: 'q1',
    history: [{ role: 'user', content: 'question' }],
    passages: [],
    tools,
    signal: controller.signal,
    emit: (f) => frames.push(f),
  };
  return { input, frames };
}

describe('runTurn: tools that write', () => {
  it('awaits a write to its end when the turn is cancelled, and says what was written', async () => {
    const write = heldTool('ehr_write', true);
    const controller = new AbortController();
    const { input, frames } = turn([write.tool], controller);
    const running = runTurn(new CallingModel(['ehr_write']), input, TURN_LIMITS);
    const signal = await write.state.started;
    controller.abort();
    // The write's own signal is not the turn's: a cancel does not reach it.
    expect(signal.aborted).toBe(false);
    write.state.release();
    const outcome = await running;
    expect(outcome.interrupted).toBe(true);
    expect(outcome.toolCalls).toMatchObject([
      { name: 'ehr_write', result: { id: 'ehr_write-1' }, error: null },
    ]);
    expect(outcome.content).toBe('Wrote ehr_write.');
    expect(frames.map((f) => f.type)).toEqual(['tool_call', 'tool_result', 'chunk']);
  });

  it('cancels a read at once, and does not start a write the cancel came before', async () => {
    const read = heldTool('ehr_read', false);
    const write = heldTool('ehr_write', true);
    const controller = new AbortController();
    const { input } = turn([read.tool, write.tool], controller);
    const running = runTurn(new CallingModel(['ehr_read', 'ehr_write']), input, TURN_LIMITS);
    const signal = await read.state.started;
    controller.abort();
    expect(signal.aborted).toBe(true);
    const outcome = await running;
    const cancelled = { code: 'TOOL_ERROR', message: 'Cancelled' };
    expect(outcome.toolCalls).toMatchObject([
      { name: 'ehr_read', result: null, error: cancelled },
      { name: 'ehr_write', result: null, error: cancelled },
    ]);
    expect(write.state.runs).toBe(0);
    expect(outcome).toMatchObject({ interrupted: true, content: '' });
  });

  it('adds nothing to an answer that was not cut short', async () => {
    const write = heldTool('ehr_write', true);
    write.state.release();
    const { input } = turn([write.tool], new AbortController());
    const outcome = await runTurn(new CallingModel(['ehr_write']), input, TURN_LIMITS);
    expect(outcome).toMatchObject({ interrupted: false, content: 'Done.' });
  });
});
