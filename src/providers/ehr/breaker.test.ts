import { ConsecutiveBreaker, CountBreaker, CircuitState } from 'cockatiel';
import { describe, expect, it } from 'vitest';
import {
  AnyOfBreaker,
  CircuitBreaker,
  ResilienceError,
  type BreakerOptions,
  type BreakerState,
} from './breaker.js';

const failure = (kind: string, status?: number): Error =>
  Object.assign(new Error(`test ${kind}`), { kind, status, retryable: kind === 'unavailable' });

const countsAsFailure = (e: unknown): boolean =>
  (e as { kind?: unknown }).kind !== 'not_found' && (e as { kind?: unknown }).kind !== 'rejected';

function setup(options: Partial<BreakerOptions> = {}) {
  const clock = { t: 1_000_000 };
  const breaker = new CircuitBreaker({
    dependency: 'ehr',
    isFailure: countsAsFailure,
    now: () => clock.t,
    ...options,
  });
  const seen: BreakerState[] = [];
  breaker.onStateChange((state) => seen.push(state));
  let calls = 0;
  const ok = () =>
    breaker.execute(() => {
      calls += 1;
      return Promise.resolve('ok');
    });
  const fail = (error: Error = failure('unavailable', 503)) =>
    breaker
      .execute(() => {
        calls += 1;
        return Promise.reject(error);
      })
      .catch((e: unknown) => e);
  return { breaker, clock, seen, ok, fail, calls: () => calls };
}

async function openIt(s: ReturnType<typeof setup>): Promise<void> {
  for (let i = 0; i < 5; i++) await s.fail();
  expect(s.breaker.state()).toBe('OPEN');
}

describe('CircuitBreaker opening', () => {
  it('opens after 5 consecutive failures, not after 4', async () => {
    const s = setup();
    expect(s.breaker.state()).toBe('CLOSED');
    for (let i = 0; i < 4; i++) await s.fail();
    expect(s.breaker.state()).toBe('CLOSED');
    await s.fail();
    expect(s.breaker.state()).toBe('OPEN');
    expect(s.seen).toEqual(['OPEN']);
  });

  it('a success resets the run of consecutive failures', async () => {
    const s = setup();
    for (let i = 0; i < 4; i++) await s.fail();
    await s.ok();
    for (let i = 0; i < 4; i++) await s.fail();
    expect(s.breaker.state()).toBe('CLOSED');
  });

  it('opens when 11 of the last 20 calls failed (never 5 in a row)', async () => {
    const s = setup();
    // Failures at even positions and at 19: 11 of 20, at most 2 in a row.
    for (let i = 0; i < 20; i++) {
      if (i === 19) expect(s.breaker.state()).toBe('CLOSED');
      if (i % 2 === 0 || i === 19) await s.fail();
      else await s.ok();
    }
    expect(s.breaker.state()).toBe('OPEN');
  });

  it('stays closed when 10 of the last 20 calls failed', async () => {
    const s = setup();
    // Failures at odd positions, so the 20th call is a failure and the rate is judged on it.
    for (let i = 0; i < 20; i++) {
      if (i % 2 === 1) await s.fail();
      else await s.ok();
    }
    expect(s.breaker.state()).toBe('CLOSED');
    await s.ok();
    expect(s.calls()).toBe(21);
  });

  it('does not count 404s, rejected 4xx answers or caller aborts', async () => {
    const s = setup();
    for (let i = 0; i < 10; i++) await s.fail(failure('not_found', 404));
    for (let i = 0; i < 10; i++) await s.fail(failure('rejected', 422));
    const aborted = AbortSignal.abort();
    for (let i = 0; i < 10; i++) {
      await s.breaker
        .execute(() => Promise.reject(failure('unavailable', 503)), aborted)
        .catch(() => undefined);
    }
    expect(s.breaker.state()).toBe('CLOSED');
    expect(s.seen).toEqual([]);
  });

  it('gives back the operation error unchanged', async () => {
    const s = setup();
    const error = failure('unavailable', 503);
    expect(await s.fail(error)).toBe(error);
  });
});

describe('CircuitBreaker while open and half-open', () => {
  it('fails fast with circuit_open without calling the operation', async () => {
    const s = setup({ halfOpenAfterMs: 30_000 });
    await openIt(s);
    s.clock.t += 10_000;
    const before = s.calls();
    const error = await s.breaker.execute(() => Promise.resolve('never')).catch((e: unknown) => e);
    expect(s.calls()).toBe(before);
    expect(error).toBeInstanceOf(ResilienceError);
    expect(error).toMatchObject({ kind: 'circuit_open', provider: 'ehr', retryAfterMs: 20_000 });
  });

  it('becomes HALF_OPEN once halfOpenAfterMs has passed on the clock', async () => {
    const s = setup({ halfOpenAfterMs: 60_000 });
    await openIt(s);
    s.clock.t += 59_999;
    expect(s.breaker.state()).toBe('OPEN');
    s.clock.t += 1;
    expect(s.breaker.state()).toBe('HALF_OPEN');
    expect(s.breaker.gaugeValue()).toBe(1);
    expect(s.seen).toEqual(['OPEN', 'HALF_OPEN']);
  });

  it('defaults to 60 s before half-open', async () => {
    const s = setup();
    await openIt(s);
    s.clock.t += 59_000;
    expect(s.breaker.state()).toBe('OPEN');
    s.clock.t += 1_000;
    expect(s.breaker.state()).toBe('HALF_OPEN');
  });

  it('closes after 3 successful trial calls, not after 2', async () => {
    const s = setup();
    await openIt(s);
    s.clock.t += 60_000;
    await s.ok();
    await s.ok();
    expect(s.breaker.state()).toBe('HALF_OPEN');
    await s.ok();
    expect(s.breaker.state()).toBe('CLOSED');
    expect(s.seen).toEqual(['OPEN', 'HALF_OPEN', 'CLOSED']);
    // Closed afresh: it takes 5 new failures to open again.
    for (let i = 0; i < 4; i++) await s.fail();
    expect(s.breaker.state()).toBe('CLOSED');
  });

  it('reopens on a failure while half-open and waits the full time again', async () => {
    const s = setup();
    await openIt(s);
    s.clock.t += 60_000;
    await s.ok();
    await s.ok();
    await s.fail();
    expect(s.breaker.state()).toBe('OPEN');
    expect(s.seen).toEqual(['OPEN', 'HALF_OPEN', 'OPEN']);
    s.clock.t += 59_999;
    expect(
      await s.breaker.execute(() => Promise.resolve(1)).catch((e: unknown) => e),
    ).toMatchObject({ kind: 'circuit_open' });
    s.clock.t += 1;
    expect(s.breaker.state()).toBe('HALF_OPEN');
  });

  it('a 404 during half-open is an answer, not a failure', async () => {
    const s = setup();
    await openIt(s);
    s.clock.t += 60_000;
    await s.fail(failure('not_found', 404));
    expect(s.breaker.state()).toBe('HALF_OPEN');
    await s.ok();
    await s.ok();
    expect(s.breaker.state()).toBe('CLOSED');
  });

  it('a listener can be removed', async () => {
    const s = setup();
    const other: BreakerState[] = [];
    const off = s.breaker.onStateChange((state) => other.push(state));
    off();
    await openIt(s);
    expect(other).toEqual([]);
  });
});

describe('CircuitBreaker closed by probes only', () => {
  it('refuses every call but probes until it is closed, then lets calls through', async () => {
    const s = setup({ trialsByProbeOnly: true });
    await openIt(s);
    s.clock.t += 60_000;
    expect(s.breaker.state()).toBe('HALF_OPEN');
    const before = s.calls();
    expect(
      await s.breaker.execute(() => Promise.resolve(1)).catch((e: unknown) => e),
    ).toMatchObject({ kind: 'circuit_open', retryAfterMs: 0 });
    const probe = () => s.breaker.execute(() => Promise.resolve('up'), undefined, true);
    expect(await probe()).toBe('up');
    await probe();
    expect(
      await s.breaker.execute(() => Promise.resolve(1)).catch((e: unknown) => e),
    ).toMatchObject({ kind: 'circuit_open' });
    await probe();
    expect(s.breaker.state()).toBe('CLOSED');
    expect(s.calls()).toBe(before);
    expect(await s.ok()).toBe('ok');
    expect(s.seen).toEqual(['OPEN', 'HALF_OPEN', 'CLOSED']);
  });

  it('refuses a probe too while the half-open wait runs', async () => {
    const s = setup({ trialsByProbeOnly: true, halfOpenAfterMs: 30_000 });
    await openIt(s);
    s.clock.t += 10_000;
    expect(s.breaker.remainingMs()).toBe(20_000);
    const probe = s.breaker.execute(() => Promise.resolve('up'), undefined, true);
    expect(await probe.catch((e: unknown) => e)).toMatchObject({
      kind: 'circuit_open',
      retryAfterMs: 20_000,
    });
  });
});

describe('AnyOfBreaker', () => {
  it('records every failure in each breaker and opens when either says so', () => {
    const consecutive = new ConsecutiveBreaker(2);
    const count = new CountBreaker({ threshold: 0.5, size: 4 });
    const both = new AnyOfBreaker([consecutive, count]);
    expect(both.failure(CircuitState.Closed)).toBe(false);
    expect(both.failure(CircuitState.Closed)).toBe(true);
    expect(consecutive.state).toBe(2);
    expect((count.state as { failures: number }).failures).toBe(2);
  });

  it('carries the state of each breaker', () => {
    const a = new ConsecutiveBreaker(5);
    const both = new AnyOfBreaker([a, new ConsecutiveBreaker(5)]);
    both.failure(CircuitState.Closed);
    const saved = both.state;
    const copy = new AnyOfBreaker([new ConsecutiveBreaker(5), new ConsecutiveBreaker(5)]);
    copy.state = saved;
    expect(copy.state).toEqual([1, 1]);
    both.success(CircuitState.Closed);
    expect(a.state).toBe(0);
  });
});
