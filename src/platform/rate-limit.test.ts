import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { AppError } from '../errors.js';
import { memoryStore, type KeyValueStore } from './kv.js';
import { createLogger } from './logger.js';
import { RateLimiter, type RateLimitRule } from './rate-limit.js';

const log = createLogger({ logLevel: 'silent' });
const LOGIN: RateLimitRule = { name: 'login', max: 3, windowSeconds: 60 };
/** A moment well inside a minute window: 2026-01-01T00:00:10Z. */
const T0 = Date.UTC(2026, 0, 1, 0, 0, 10);
const WINDOW_END = Date.UTC(2026, 0, 1, 0, 1, 0) / 1000;

function fakeClock(start = T0) {
  const clock = { t: start, now: () => clock.t };
  return clock;
}

describe('memoryStore', () => {
  it('counts up and starts again once the counter has expired', async () => {
    const clock = fakeClock();
    const store = memoryStore(clock.now);
    expect(await store.increment('a', 1000)).toBe(1);
    expect(await store.increment('a', 1000)).toBe(2);
    expect(await store.increment('b', 1000)).toBe(1);
    clock.t += 999;
    expect(await store.increment('a', 1000)).toBe(3);
    clock.t += 1;
    expect(await store.increment('a', 1000)).toBe(1);
    await store.close();
  });

  it('keeps flags until they expire', async () => {
    const clock = fakeClock();
    const store = memoryStore(clock.now);
    expect(await store.anyFlag([])).toBe(false);
    await store.setFlag('revoked:1', 10);
    expect(await store.anyFlag(['revoked:0', 'revoked:1'])).toBe(true);
    expect(await store.anyFlag(['revoked:0'])).toBe(false);
    clock.t += 9_999;
    expect(await store.anyFlag(['revoked:1'])).toBe(true);
    clock.t += 1;
    expect(await store.anyFlag(['revoked:1'])).toBe(false);
    await store.close();
  });

  it('sweeps expired entries and answers ping', async () => {
    vi.useFakeTimers();
    try {
      const clock = fakeClock();
      const store = memoryStore(clock.now);
      await store.increment('a', 1000);
      await store.setFlag('f', 1);
      clock.t += 2000;
      vi.advanceTimersByTime(60_000);
      // Swept or not, an expired entry behaves as absent.
      expect(await store.increment('a', 1000)).toBe(1);
      expect(await store.anyFlag(['f'])).toBe(false);
      await expect(store.ping()).resolves.toBeUndefined();
      await store.close();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('RateLimiter', () => {
  it('allows `max` hits per window and reports what is left', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter(memoryStore(clock.now), log, clock.now);
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await limiter.hit(LOGIN, '10.0.0.1'));
    expect(results.map((r) => r?.allowed)).toEqual([true, true, true, false, false]);
    expect(results.map((r) => r?.remaining)).toEqual([2, 1, 0, 0, 0]);
    for (const r of results) {
      expect(r).toMatchObject({ limit: 3, resetAt: WINDOW_END });
    }
  });

  it('counts each client and each rule separately', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter(memoryStore(clock.now), log, clock.now);
    for (let i = 0; i < 3; i++) await limiter.hit(LOGIN, '10.0.0.1');
    expect((await limiter.hit(LOGIN, '10.0.0.1'))?.allowed).toBe(false);
    expect((await limiter.hit(LOGIN, '10.0.0.2'))?.allowed).toBe(true);
    expect((await limiter.hit({ ...LOGIN, name: 'register' }, '10.0.0.1'))?.allowed).toBe(true);
  });

  it('uses fixed windows aligned to the epoch', async () => {
    const clock = fakeClock(WINDOW_END * 1000 - 1);
    const limiter = new RateLimiter(memoryStore(clock.now), log, clock.now);
    for (let i = 0; i < 3; i++) await limiter.hit(LOGIN, 'ip');
    const last = await limiter.hit(LOGIN, 'ip');
    expect(last).toMatchObject({ allowed: false, resetAt: WINDOW_END });

    clock.t = WINDOW_END * 1000; // the first millisecond of the next window
    const next = await limiter.hit(LOGIN, 'ip');
    expect(next).toMatchObject({ allowed: true, remaining: 2, resetAt: WINDOW_END + 60 });
  });

  it('puts the reset of an hourly window at the end of the hour', async () => {
    const clock = fakeClock(Date.UTC(2026, 0, 1, 5, 59, 59, 500));
    const limiter = new RateLimiter(memoryStore(clock.now), log, clock.now);
    const r = await limiter.hit({ name: 'register', max: 5, windowSeconds: 3600 }, 'ip');
    expect(r?.resetAt).toBe(Date.UTC(2026, 0, 1, 6) / 1000);
  });

  it('fails open, with a warning, when the store is unreachable', async () => {
    const broken: KeyValueStore = {
      ...memoryStore(),
      increment: () => Promise.reject(new Error('connection refused')),
    };
    const warn = vi.spyOn(log, 'warn');
    const limiter = new RateLimiter(broken, log);
    expect(await limiter.hit(LOGIN, 'ip')).toBeNull();
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
  });

  describe('hook', () => {
    function fakeReply() {
      const headers: Record<string, unknown> = {};
      const reply = {
        headers(values: Record<string, unknown>) {
          Object.assign(headers, values);
          return reply;
        },
      };
      return { reply: reply as unknown as FastifyReply, headers };
    }
    const request = (ip: string) => ({ ip }) as FastifyRequest;

    it('sends the X-RateLimit headers and refuses with Retry-After', async () => {
      const clock = fakeClock();
      const limited: string[] = [];
      const hook = new RateLimiter(memoryStore(clock.now), log, clock.now).hook(LOGIN, (rule) =>
        limited.push(rule.name),
      );

      const first = fakeReply();
      await hook(request('10.0.0.9'), first.reply);
      expect(first.headers).toEqual({
        'x-ratelimit-limit': 3,
        'x-ratelimit-remaining': 2,
        'x-ratelimit-reset': WINDOW_END,
      });
      await hook(request('10.0.0.9'), fakeReply().reply);
      await hook(request('10.0.0.9'), fakeReply().reply);

      clock.t += 5_500; // 44.5 s of the window left
      const fourth = fakeReply();
      const err: unknown = await hook(request('10.0.0.9'), fourth.reply).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'RATE_LIMITED', headers: { 'retry-after': '45' } });
      expect(fourth.headers).toMatchObject({ 'x-ratelimit-remaining': 0 });
      expect(limited).toEqual(['login']);
      // Another client is unaffected.
      await expect(hook(request('10.0.0.10'), fakeReply().reply)).resolves.toBeUndefined();
    });

    it('never asks for a Retry-After below one second', async () => {
      const clock = fakeClock(WINDOW_END * 1000 - 100);
      const hook = new RateLimiter(memoryStore(clock.now), log, clock.now).hook(
        { name: 'x', max: 1, windowSeconds: 60 },
        () => undefined,
      );
      await hook(request('ip'), fakeReply().reply);
      await expect(hook(request('ip'), fakeReply().reply)).rejects.toMatchObject({
        headers: { 'retry-after': '1' },
      });
    });
  });
});

describe('RateLimiter leases (limits of 2000 or more per window)', () => {
  const BIG: RateLimitRule = { name: 'health', max: 5000, windowSeconds: 60 };
  const allowedOf = (results: ({ allowed: boolean } | null)[]) =>
    results.filter((r) => r?.allowed === true).length;

  it('reserves hits in leases of at most 1000, never above 0.1% of the limit', async () => {
    const { leaseSize } = await import('./rate-limit.js');
    expect([100, 1999, 2000, 5000, 64_000, 1_000_000, 10_000_000].map(leaseSize)).toEqual([
      1, 1, 2, 5, 64, 1000, 1000,
    ]);
  });

  it('reserves the next lease while half of the current one is left', async () => {
    const clock = fakeClock();
    const store = memoryStore(clock.now);
    const increment = vi.spyOn(store, 'increment');
    const limiter = new RateLimiter(store, log, clock.now);
    await limiter.hit(BIG, 'ip'); // reserves 5, uses 1
    await limiter.hit(BIG, 'ip');
    expect(increment).toHaveBeenCalledTimes(1);
    await limiter.hit(BIG, 'ip'); // 2 of 5 left: the next 5 are reserved meanwhile
    expect(increment).toHaveBeenCalledTimes(2);
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await limiter.hit(BIG, 'ip'));
    expect(results.map((r) => r?.remaining)).toEqual([4996, 4995, 4994, 4993, 4992]);
    // The eighth hit left 2 of 10: 5 more reserved; unused: 7, a lease and a half.
    expect(increment).toHaveBeenCalledTimes(3);
  });

  it('answers from the lease while the next one is on its way', async () => {
    const clock = fakeClock();
    const store = memoryStore(clock.now);
    const limiter = new RateLimiter(store, log, clock.now);
    await limiter.hit(BIG, 'ip');
    let release: () => void = () => undefined;
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    const increment = store.increment.bind(store);
    vi.spyOn(store, 'increment').mockImplementation(async (...args) => {
      await slow;
      return increment(...args);
    });
    // Three more hits are answered by the first lease; the third sends the refill on its way.
    const local = [1, 2, 3].map(() => limiter.hit(BIG, 'ip'));
    expect((await Promise.all(local)).every((r) => r?.allowed === true)).toBe(true);
    // The last hit of the lease; the one after waits for the refill, then takes a share of it.
    expect((await limiter.hit(BIG, 'ip'))?.remaining).toBe(4995);
    const waiting = limiter.hit(BIG, 'ip');
    release();
    expect(await waiting).toMatchObject({ allowed: true, remaining: 4994 });
  });

  it('admits exactly the limit on one instance, with remaining counting down to zero', async () => {
    const clock = fakeClock();
    const store = memoryStore(clock.now);
    const increment = vi.spyOn(store, 'increment');
    const limiter = new RateLimiter(store, log, clock.now);
    const remaining: number[] = [];
    let allowed = 0;
    for (let i = 0; i < 5100; i++) {
      const r = await limiter.hit(BIG, 'ip');
      if (r?.allowed === true) allowed += 1;
      remaining.push(r?.remaining ?? -1);
    }
    expect(allowed).toBe(5000);
    expect(remaining.slice(0, 3)).toEqual([4999, 4998, 4997]);
    expect(remaining[4999]).toBe(0);
    expect(remaining.every((n, i) => i === 0 || n <= remaining[i - 1]!)).toBe(true);
    // One store call per lease of five, and none once the client is over the limit.
    expect(increment.mock.calls.length).toBe(1000);
  });

  it('admits exactly the limit when hits arrive all at once', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter(memoryStore(clock.now), log, clock.now);
    const results = await Promise.all(Array.from({ length: 6000 }, () => limiter.hit(BIG, 'ip')));
    expect(allowedOf(results)).toBe(5000);
  });

  it('never exceeds the limit across instances sharing one store', async () => {
    const clock = fakeClock();
    const store = memoryStore(clock.now);
    const limiters = [0, 1, 2].map(() => new RateLimiter(store, log, clock.now));
    const results = await Promise.all(
      Array.from({ length: 7000 }, (_, i) => limiters[i % 3]!.hit(BIG, 'ip')),
    );
    const allowed = allowedOf(results);
    expect(allowed).toBeLessThanOrEqual(5000);
    // Unused reservations refuse at most one and a half leases early per instance.
    expect(allowed).toBeGreaterThanOrEqual(5000 - 3 * 7);
  });

  it('starts again in the next window', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter(memoryStore(clock.now), log, clock.now);
    for (let i = 0; i < 5000; i++) await limiter.hit(BIG, 'ip');
    expect((await limiter.hit(BIG, 'ip'))?.allowed).toBe(false);
    clock.t = WINDOW_END * 1000 + 1;
    expect(await limiter.hit(BIG, 'ip')).toMatchObject({ allowed: true, remaining: 4999 });
  });
});
