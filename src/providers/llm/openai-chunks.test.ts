import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ChunkAssembler, hasInvalidArguments, parseArguments } from './openai-chunks.js';
import { ProviderError } from './types.js';

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;
type Delta = Chunk['choices'][number]['delta'];

const chunk = (delta: Delta, finish: string | null = null, usage?: Chunk['usage']): Chunk =>
  ({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    ...(usage === undefined ? {} : { usage }),
  }) as Chunk;

const usage = (p: number, c: number) => ({
  prompt_tokens: p,
  completion_tokens: c,
  total_tokens: p + c,
});

function run(chunks: Chunk[]) {
  const assembler = new ChunkAssembler();
  return [...chunks.flatMap((c) => assembler.push(c)), ...assembler.finish()];
}

describe('parseArguments', () => {
  it.each([
    ['{"a":1}', { a: 1 }],
    ['', {}],
    ['  ', {}],
    ['{"a":', { _invalid: 'the arguments were not valid JSON' }],
    ['[1,2]', { _invalid: 'the arguments were not a JSON object' }],
    ['null', { _invalid: 'the arguments were not a JSON object' }],
    ['"text"', { _invalid: 'the arguments were not a JSON object' }],
  ])('%j -> %j', (text, expected) => {
    expect(parseArguments(text)).toEqual(expected);
  });
});

describe('ChunkAssembler', () => {
  it('keeps the last usage when a server sends it on every chunk', () => {
    const events = run([
      chunk({ content: 'a' }, null, usage(5, 1)),
      chunk({ content: 'b' }, 'stop', usage(5, 2)),
    ]);
    expect(events).toEqual([
      { type: 'text_delta', text: 'a' },
      { type: 'text_delta', text: 'b' },
      { type: 'usage', inputTokens: 5, outputTokens: 2 },
      { type: 'done', finishReason: 'stop' },
    ]);
  });

  it.each([
    ['a negative count', { prompt_tokens: -1, completion_tokens: 3 }],
    ['a fraction', { prompt_tokens: 5, completion_tokens: 1.5 }],
    ['a string', { prompt_tokens: '5', completion_tokens: 3 }],
    ['a missing count', { prompt_tokens: 5 }],
  ])('leaves out usage with %s, keeping the last good one', (_case, bad) => {
    const events = run([
      chunk({ content: 'a' }, null, usage(5, 1)),
      chunk({ content: 'b' }, 'stop', bad as unknown as Chunk['usage']),
    ]);
    expect(events.filter((e) => e.type === 'usage')).toEqual([
      { type: 'usage', inputTokens: 5, outputTokens: 1 },
    ]);
  });

  it('passes a refusal through as text', () => {
    expect(run([chunk({ refusal: 'I cannot help.' }, 'stop')])[0]).toEqual({
      type: 'text_delta',
      text: 'I cannot help.',
    });
  });

  it('gives a call without an id one, and calls it tool_calls even after `stop`', () => {
    const events = run([
      chunk({ tool_calls: [{ index: 0, function: { name: 'search', arguments: '{}' } }] }, 'stop'),
    ]);
    const call = events[0]!.type === 'tool_call' ? events[0]!.call : undefined;
    expect(call?.id).toMatch(/^call_[0-9a-f-]{36}$/);
    expect(call && hasInvalidArguments(call)).toBe(false);
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'tool_calls' });
  });

  it('orders calls by index, whatever order their pieces came in', () => {
    const events = run([
      chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'two', arguments: '{' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'one', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '}' } }] }, 'tool_calls'),
    ]);
    expect(events.map((e) => (e.type === 'tool_call' ? e.call.id : e.type))).toEqual([
      'a',
      'b',
      'done',
    ]);
  });

  it('marks unusable arguments and still emits the call', () => {
    const events = run([
      chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'x', arguments: '{"q":' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    const call = events[0]!.type === 'tool_call' ? events[0]!.call : undefined;
    expect(call && hasInvalidArguments(call)).toBe(true);
  });

  it('runs no tool call cut off by the token limit', () => {
    const events = run([
      chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'x', arguments: '{"q":' } }] }),
      chunk({}, 'length'),
    ]);
    expect(events).toEqual([{ type: 'done', finishReason: 'length' }]);
  });

  it('fails a tool call without a name', () => {
    const assembler = new ChunkAssembler();
    assembler.push(
      chunk({ tool_calls: [{ index: 0, id: 'a', function: { arguments: '{}' } }] }, 'tool_calls'),
    );
    expect(() => assembler.finish()).toThrow(ProviderError);
  });

  it('fails, retryably, a stream that ends without a finish reason', () => {
    const assembler = new ChunkAssembler();
    assembler.push(chunk({ content: 'partial' }));
    expect(() => assembler.finish()).toThrow(expect.objectContaining({ retryable: true }));
  });

  it('fails, finally, an answer stopped by a content filter', () => {
    const assembler = new ChunkAssembler();
    assembler.push(chunk({ content: 'partial' }, 'content_filter'));
    expect(() => assembler.finish()).toThrow(expect.objectContaining({ retryable: false }));
  });

  it('ignores chunks without choices and content after the finish', () => {
    const assembler = new ChunkAssembler();
    expect(assembler.push({ ...chunk({}), choices: [] })).toEqual([]);
    assembler.push(chunk({}, 'stop'));
    expect(assembler.push(chunk({ content: 'late' }))).toEqual([]);
  });
});
