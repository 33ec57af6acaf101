import { describe, expect, it } from 'vitest';
import { ThreadCalls } from '../src/platform/thread-calls.js';

type Request = { id: number } & (
  { type: 'echo'; text: string } | { type: 'fail' } | { type: 'exit' } | { type: 'hang' }
);
type Answer =
  | { id: number; type: 'echoed'; text: string; threadId: number }
  | { id: number; type: 'failed'; message: string };

function echoThread(ended: Error[] = []) {
  return new ThreadCalls<Request, Answer>({
    base: new URL('./fixtures/threads/echo-thread.ts', import.meta.url).href,
    entry: 'echo-thread',
    label: 'echo',
    onEnded: (error, closing) => {
      if (!closing) ended.push(error);
    },
  });
}

describe('calls into a worker thread', () => {
  it('answers each call with its own answer, and rejects the ones the thread fails', async () => {
    const calls = echoThread();
    const answers = await Promise.all(
      ['a', 'b', 'c'].map((text) => calls.call({ type: 'echo', text })),
    );
    expect(answers.map((a) => a.text)).toEqual(['a', 'b', 'c']);
    await expect(calls.call({ type: 'fail' })).rejects.toThrow('echo: asked to fail');
    expect((await calls.call({ type: 'echo', text: 'still here' })).type).toBe('echoed');
    await calls.close();
    expect(() => calls.call({ type: 'echo', text: 'closed' })).toThrow('echo closed');
  });

  it('rejects what was pending when the thread ends, and starts another for the next call', async () => {
    const ended: Error[] = [];
    const calls = echoThread(ended);
    const first = await calls.call({ type: 'echo', text: 'one' });
    const exiting = calls.call({ type: 'exit' });
    const queued = calls.call({ type: 'echo', text: 'behind the exit' });
    await expect(exiting).rejects.toThrow('echo thread exited with 3');
    await expect(queued).rejects.toThrow('echo thread exited with 3');
    expect(ended).toHaveLength(1);
    const second = await calls.call({ type: 'echo', text: 'two' });
    expect(second.threadId).not.toBe(first.threadId);
    await calls.close();
  });

  it('gives up on a call when its signal aborts', async () => {
    const calls = echoThread();
    const controller = new AbortController();
    const hanging = calls.call({ type: 'hang' }, controller.signal);
    controller.abort(new Error('the turn gave up'));
    await expect(hanging).rejects.toThrow('the turn gave up');
    expect((await calls.call({ type: 'echo', text: 'after' })).type).toBe('echoed');
    await calls.close();
  });
});
