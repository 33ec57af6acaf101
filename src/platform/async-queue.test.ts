import { describe, expect, it } from 'vitest';
import { AsyncQueue } from './async-queue.js';

describe('AsyncQueue', () => {
  it('hands over what was pushed before and while the reader waits, then ends', async () => {
    const q = new AsyncQueue<number>();
    q.push(1);
    const read = (async () => {
      const got: number[] = [];
      for await (const n of q) got.push(n);
      return got;
    })();
    await Promise.resolve();
    q.push(2);
    setTimeout(() => {
      q.push(3);
      q.end();
      q.push(4);
    }, 5);
    expect(await read).toEqual([1, 2, 3]);
  });

  it('stops and empties when the reader breaks off', async () => {
    const q = new AsyncQueue<string>();
    q.push('a');
    q.push('b');
    for await (const s of q) {
      expect(s).toBe('a');
      break;
    }
    expect(q.size).toBe(0);
    q.push('c');
    expect(q.size).toBe(0);
  });
});
