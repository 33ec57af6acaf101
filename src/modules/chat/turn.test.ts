import { describe, expect, it, vi } from 'vitest';
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

/** Calls `lookup` once with usage 100/7, then answers with usage 250/40, or hangs if `hang`. */
class CountingModel implements LlmProvider {
  readonly name = 'counting';
  readonly model = 'counting-1';
  constructor(private readonly hang = false) {}

  async *stream(request: LlmRequest, options: { signal: AbortSignal }): AsyncIterable<LlmEvent> {
    await Promise.resolve();
    options.signal.throwIfAborted();
    if (request.messages.at(-1)?.role === 'user') {
      yield { type: 'tool_call', call: { id: 'c0', name: 'lookup', arguments: {} } };
      yield { type: 'usage', inputTokens: 100, outputTokens: 7 };
      yield { type: 'done', finishReason: 'tool_calls' };
      return;
    }
    yield { type: 'text_delta', text: 'Found. ' };
    if (this.hang) {
      // Cut short before its usage: like a stream cancelled before the server's last chunk.
      await new Promise((_resolve, reject) => {
        options.signal.addEventListener('abort', () => {
          reject(options.signal.reason as Error);
        });
      });
    }
    yield { type: 'usage', inputTokens: 250, outputTokens: 40 };
    yield { type: 'done', finishReason: 'stop' };
  }
}

const lookup: Tool = {
  definition: { name: 'lookup', description: 'lookup', parameters: {} },
  run: () => Promise.resolve({ found: true }),
};

const counted = (inputTokens: number, outputTokens: number) => ({
  provider: 'counting',
  model: 'counting-1',
  inputTokens,
  outputTokens,
});

describe('runTurn: token usage', () => {
  it("sums the usage of the turn's model calls, with the provider and model", async () => {
    const { input } = turn([lookup], new AbortController());
    const outcome = await runTurn(new CountingModel(), input, TURN_LIMITS);
    expect(outcome.content).toBe('Found.');
    expect(outcome.usage).toEqual(counted(350, 47));
  });

  it('keeps what was reported before a cancel, and nothing of the call it cut short', async () => {
    const controller = new AbortController();
    const { input, frames } = turn([lookup], controller);
    const running = runTurn(new CountingModel(true), input, TURN_LIMITS);
    await vi.waitFor(() => {
      expect(frames.some((f) => f.type === 'chunk')).toBe(true);
    });
    controller.abort();
    const outcome = await running;
    expect(outcome.interrupted).toBe(true);
    expect(outcome.usage).toEqual(counted(100, 7));
  });

  it('is null when the model reports none', async () => {
    const { input } = turn([], new AbortController());
    const outcome = await runTurn(new CallingModel([]), input, TURN_LIMITS);
    expect(outcome.usage).toBeNull();
  });
});
