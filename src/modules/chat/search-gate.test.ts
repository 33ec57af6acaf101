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

  it('tells nothing before it has timed a search, then refuses what would miss the deadline', async () => {
    const gate = new SearchGate(1);
    expect(gate.admit(100)).toBeUndefined();
    const slow = () =>
      new Promise<string>((resolve) =>
        setTimeout(() => {
          resolve('x');
        }, 30),
      );
    await gate.run(slow, later(1000));
    // About 30 ms a search, one at a time: with nobody ahead, one fits in 100 ms.
    expect(gate.admit(100)).toBeUndefined();
    const held = pending();
    const queued = [gate.run(() => held.promise, later(5000))];
    for (let i = 0; i < 5; i += 1) queued.push(gate.run(slow, later(5000)));
    // Six ahead (one running, five waiting): about 180 ms before another would start.
    const wait = gate.admit(100);
    expect(wait).toBeGreaterThan(100);
    expect(gate.admit(10_000)).toBeUndefined();
    held.finish('held');
    await Promise.all(queued);
  });

  it('judges the wait by the pace searches complete at while the gate is full, not a stale mean', async () => {
    const gate = new SearchGate(1);
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // One slow search (300 ms) makes the mean duration slow for a while after...
    await gate.run(() => sleep(300), later(1000));
    // ...while a queue of 10 ms searches drains: by the 13th, twelve have completed about 10 ms
    // apart with others waiting, and eight are still ahead.
    let told: number | undefined | null = null;
    await Promise.all(
      Array.from({ length: 21 }, (_, i) =>
        gate.run(async () => {
          if (i === 12) told = gate.admit(250);
          await sleep(10);
        }, later(5000)),
      ),
    );
    // The mean (about 30 ms now) would put eight searches at 240 ms and refuse; their pace
    // (about 10 ms) puts them well within 250 ms.
    expect(told).toBeUndefined();
  });

  it('before a pace is measured, counts a search at the median of the last ones, not its outliers', async () => {
    const gate = new SearchGate(1);
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    for (let i = 0; i < 6; i += 1) await gate.run(() => sleep(5), later(1000));
    // The last three of nine slow (a burst's first searches): the median is still a fast one.
    for (let i = 0; i < 3; i += 1) await gate.run(() => sleep(300), later(5000));
    // Ten turns admitted ahead, none searching yet: about 10 x 5-10 ms, well within 400 ms (a
    // mean weighted towards the last searches, about 150 ms, would have put them at 1.5 s).
    for (let i = 0; i < 10; i += 1) expect(gate.admit(400)).toBeUndefined();
    // Slow searches for most of the last fifteen (the admitted turns' time has passed): the median
    // is a slow one, and a turn with less time than that is refused.
    for (let i = 0; i < 6; i += 1) await gate.run(() => sleep(300), later(5000));
    expect(gate.admit(250)).toBeDefined();
    expect(gate.admit(1000)).toBeUndefined();
  });

  it('counts turns it admitted whose searches have not started yet', async () => {
    const gate = new SearchGate(1);
    await gate.run(() => new Promise((resolve) => setTimeout(resolve, 30)), later(1000));
    // Searches of 30 ms or more, one at a time, a budget of 100 ms: the first turn fits; by the
    // fourth, the turns admitted before it (none has searched yet) fill the budget, and the wait
    // it is told covers at least one search ahead.
    expect(gate.admit(100)).toBeUndefined();
    const next = [gate.admit(100), gate.admit(100), gate.admit(100)];
    const refused = next.find((a) => a !== undefined);
    expect(refused).toBeGreaterThanOrEqual(30);
  });

  it('counts an admitted turn until its own question search starts, not another search', async () => {
    const gate = new SearchGate(1);
    const slow = () =>
      new Promise<string>((resolve) =>
        setTimeout(() => {
          resolve('x');
        }, 200),
      );
    await gate.run(slow, later(5000));
    // Searches of about 200 ms, a 500 ms budget: two admitted turns fit, a third would not.
    expect(gate.admit(500)).toBeUndefined();
    expect(gate.admit(500)).toBeUndefined();
    // A search that is not a turn's question (the model's own) leaves both entries in place...
    await gate.run(slow, later(5000));
    expect(gate.admit(500)).toBeGreaterThanOrEqual(400);
    // ...an admitted turn's question search removes its own.
    await gate.run(slow, later(5000), undefined, true);
    expect(gate.admit(500)).toBeUndefined();
  });

  it('runs fewer at once when searches slow down, and more again when they are fast', async () => {
    const gate = new SearchGate(4);
    const after = (ms: number) => () =>
      new Promise<string>((resolve) =>
        setTimeout(() => {
          resolve('x');
        }, ms),
      );
    for (let i = 0; i < 4; i += 1) await gate.run(after(5), later(1000));
    for (let i = 0; i < 3; i += 1) await gate.run(after(60), later(1000));
    expect(gate.size).toBe(1);
    // Fast again, and busy: the limit climbs back while searches queue for it.
    await Promise.all(Array.from({ length: 12 }, () => gate.run(after(5), later(5000))));
    expect(gate.size).toBeGreaterThan(1);
  });

  it('passes the caller’s signal to the search, which stops and frees its slot', async () => {
    const gate = new SearchGate(1);
    const giveUp = new AbortController();
    const running = gate.run(
      (signal) =>
        new Promise<string>((_, reject) => {
          signal.addEventListener('abort', () => {
            reject(new Error('aborted'));
          });
        }),
      later(1000),
      giveUp.signal,
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    giveUp.abort();
    await expect(running).rejects.toThrow('aborted');
    // Given up before its turn came: it never runs.
    const before = new AbortController();
    before.abort(new Error('given up'));
    let ran = false;
    await expect(
      gate.run(
        () => {
          ran = true;
          return Promise.resolve('late');
        },
        later(100),
        before.signal,
      ),
    ).rejects.toThrow('given up');
    expect(ran).toBe(false);
    expect(await gate.run(() => Promise.resolve('next'), later(5))).toBe('next');
  });
});
