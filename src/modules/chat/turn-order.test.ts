import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStore, type KeyValueStore } from '../../platform/kv.js';
import { createLogger } from '../../platform/logger.js';
import { memoryPubSub } from '../../platform/pubsub.js';
import { TurnOrder, type PlaceInLine, type TurnOrderLimits } from './turn-order.js';

const log = createLogger({ logLevel: 'silent' });
const LIMITS: TurnOrderLimits = { leaseMs: 600, waitMs: 5000, maxInLine: 3, pollMs: 50 };
const KEY = 'chat:turn:c1:main';

/** Settles to what `p` gave, or 'waiting' when it has not settled within `ms`. */
const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, sleep(ms).then(() => 'waiting' as const)]);

describe('TurnOrder (in-process store)', () => {
  let kv: KeyValueStore;
  const places: PlaceInLine[] = [];
  const order = (limits: Partial<TurnOrderLimits> = {}) => {
    kv = memoryStore();
    return new TurnOrder(kv, memoryPubSub(), { ...LIMITS, ...limits }, log);
  };
  const join = async (turns: TurnOrder, id: string) => {
    const place = await turns.join('c1', 'main', id);
    places.push(place);
    return place;
  };
  afterEach(async () => {
    for (const p of places.splice(0)) await p.release();
    await kv.close();
  });

  it('the first turn goes at once; the next waits until it leaves, then is woken', async () => {
    const turns = order({ pollMs: 10_000 });
    const first = await join(turns, 'a');
    expect(await first.first(new AbortController().signal)).toBe(true);
    const second = await join(turns, 'b');
    const waiting = second.first(new AbortController().signal);
    expect(await within(waiting, 200)).toBe('waiting');
    await first.release();
    // Woken over pub/sub, not by the (10 s) poll.
    expect(await within(waiting, 200)).toBe(true);
  });

  it('turns go in the order they joined', async () => {
    const turns = order();
    const [a, b, c] = [await join(turns, 'a'), await join(turns, 'b'), await join(turns, 'c')];
    const went: string[] = [];
    const signal = new AbortController().signal;
    const waits = [b, c].map((p, i) =>
      p.first(signal).then(() => {
        went.push(i === 0 ? 'b' : 'c');
      }),
    );
    await sleep(100);
    expect(went).toEqual([]);
    await a.release();
    await sleep(100);
    expect(went).toEqual(['b']);
    await b.release();
    await Promise.all(waits);
    expect(went).toEqual(['b', 'c']);
  });

  it('refuses a turn when the line is full (RATE_LIMITED)', async () => {
    const turns = order();
    for (const id of ['a', 'b', 'c']) await join(turns, id);
    await expect(turns.join('c1', 'main', 'd')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    // Another branch has a line of its own.
    places.push(await turns.join('c1', 'other', 'd'));
  });

  it('gives up after waitMs with CONFLICT, and stops waiting when aborted', async () => {
    const turns = order({ waitMs: 200 });
    await join(turns, 'a');
    const late = await join(turns, 'b');
    await expect(late.first(new AbortController().signal)).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    const stop = new AbortController();
    const waiting = late.first(stop.signal);
    stop.abort();
    expect(await waiting).toBe(false);
  });

  it('a turn whose instance died (its place no longer renewed) frees the branch within its lease', async () => {
    const turns = order();
    // Taken directly in the store: nothing renews it, as after a crash.
    await kv.lease(KEY, 'crashed', LIMITS.leaseMs);
    const next = await join(turns, 'next');
    const started = Date.now();
    expect(await next.first(new AbortController().signal)).toBe(true);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThan(LIMITS.leaseMs / 2);
    expect(waited).toBeLessThan(LIMITS.leaseMs + 1500);
  });

  it('after the store lost the line, the running turn takes its place back before a waiting one goes', async () => {
    const turns = order();
    const running = await join(turns, 'running');
    const waiting = await join(turns, 'waiting');
    const wait = waiting.first(new AbortController().signal);
    // As a Redis restarted empty: both places are gone.
    await kv.dropLease(KEY, 'running');
    await kv.dropLease(KEY, 'waiting');
    // The waiting turn comes back first, alone in the line, yet does not go: the running turn's
    // renewal (every third of a lease) puts it back ahead, at its old order.
    expect(await within(wait, LIMITS.leaseMs)).toBe('waiting');
    expect(running.lease.lostAt).toBeDefined();
    await running.release();
    expect(await within(wait, 300)).toBe(true);
  });
});
