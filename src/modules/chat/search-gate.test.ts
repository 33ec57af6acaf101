import { describe, expect, it } from 'vitest';
import { SearchGate } from './search-gate.js';

const later = (ms: number) => performance.now() + ms;

/** A search that ends when the test says so. */
function pending() {
  let finish: (value: string) => void = () => undefined;
  const promise = new Promise<string>((resolve) => {
    finish = resolve;
  });
  return { promise, finish };
}

describe('SearchGate', () => {
  it('runs at most `limit` searches at once, the next in order of arrival', async () => {
    const gate = new SearchGate(2);
    const searches = [pending(), pending(), pending()];
    const started: number[] = [];
    const results = searches.map((s, i) =>
      gate.run(() => {
        started.push(i);
        return s.promise;
      }, later(1000)),
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(started).toEqual([0, 1]);
    searches[1]?.finish('b');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(started).toEqual([0, 1, 2]);
    searches[0]?.finish('a');
    searches[2]?.finish('c');
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c']);
  });

  it('a waiter whose deadline passes leaves without searching, and frees no slot it never had', async () => {
    const gate = new SearchGate(1);
    const first = pending();
    let ranLate = false;
    const running = gate.run(() => first.promise, later(1000));
    const late = gate.run(() => {
      ranLate = true;
      return Promise.resolve('late');
    }, later(20));
    expect(await late).toBeUndefined();
    expect(ranLate).toBe(false);
    first.finish('first');
    expect(await running).toBe('first');
    // The slot is free again: the next search runs at once.
    expect(await gate.run(() => Promise.resolve('next'), later(5))).toBe('next');
  });

  it('a failing search gives its slot back', async () => {
    const gate = new SearchGate(1);
    await expect(gate.run(() => Promise.reject(new Error('db down')), later(100))).rejects.toThrow(
      'db down',
    );
    expect(await gate.run(() => Promise.resolve('ok'), later(5))).toBe('ok');
  });
});
