import { describe, expect, it, vi } from 'vitest';
import {
  MemoryLastGoodStore,
  Resilience,
  ResilienceError,
  countsAsFailure,
  lastGoodKey,
  type DegradationEvent,
  type GaugeValue,
  type ResilienceOptions,
} from './resilience.js';

const failure = (kind: string, status?: number, retryable = kind === 'unavailable'): Error =>
  Object.assign(new Error(`test ${kind}`), { kind, status, retryable });

const unavailable = () => failure('unavailable', 503);
const KEY = lastGoodKey('pat-1', 'summary');

function setup(options: ResilienceOptions = {}) {
  const clock = { t: Date.parse('2026-01-02T03:04:05.000Z') };
  const events: DegradationEvent[] = [];
  const gauge: GaugeValue[] = [];
  const r = new Resilience({
    now: () => clock.t,
    retryInitialDelayMs: 1,
    retryMaxDelayMs: 2,
    onDegradation: (e) => events.push(e),
    onGauge: (v) => gauge.push(v),
    ...options,
  });
  return { r, clock, events, gauge };
}

/** An operation that fails `failures` times (with `error()`), then answers `value`. */
function flaky<T>(value: T, failures = 0, error: () => Error = unavailable) {
  const op = { calls: 0, run: (_signal: AbortSignal) => Promise.resolve(value) };
  op.run = () => {
    op.calls += 1;
    return op.calls <= failures ? Promise.reject(error()) : Promise.resolve(value);
  };
  return op;
}

const caught = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => 'resolved',
    (e: unknown) => e,
  );

async function openIt(r: Resilience): Promise<void> {
  const down = flaky('x', Infinity);
  for (let i = 0; i < 5; i++) await caught(r.run(down.run, { idempotent: false }));
  expect(r.state()).toBe('OPEN');
}

describe('Resilience retries and timeouts', () => {
  it('retries a read that fails as unavailable', async () => {
    const { r } = setup({ retries: 2 });
    const op = flaky({ id: 'pat-1' }, 2);
    const answer = await r.read(KEY, op.run);
    expect(op.calls).toBe(3);
    expect(answer).toEqual({
      value: { id: 'pat-1' },
      fetchedAt: '2026-01-02T03:04:05.000Z',
      stale: false,
    });
  });

  it('gives up after the configured retries with the last error', async () => {
    const { r } = setup({ retries: 2 });
    const op = flaky('x', Infinity);
    const error = await caught(r.run(op.run, { idempotent: true }));
    expect(op.calls).toBe(3);
    expect(error).toMatchObject({ kind: 'unavailable' });
  });

  it('never retries a write', async () => {
    const retried: number[] = [];
    const { r } = setup({ retries: 5, onRetry: (e) => retried.push(e.attempt) });
    const op = flaky('written', 1);
    const error = await caught(r.run(op.run, { idempotent: false }));
    expect(op.calls).toBe(1);
    expect(retried).toEqual([]);
    expect(error).toMatchObject({ kind: 'unavailable' });
  });

  it('does not retry a 4xx answer or an error marked not retryable', async () => {
    const { r } = setup({ retries: 5 });
    const rejected = flaky('x', Infinity, () => failure('rejected', 400));
    await caught(r.run(rejected.run, { idempotent: true }));
    expect(rejected.calls).toBe(1);
    const malformed = flaky('x', Infinity, () => failure('malformed', undefined, false));
    await caught(r.run(malformed.run, { idempotent: true }));
    expect(malformed.calls).toBe(1);
  });

  it('stops retrying once the breaker opens', async () => {
    const retried: number[] = [];
    const { r } = setup({ retries: 10, onRetry: (e) => retried.push(e.attempt) });
    const op = flaky('x', Infinity);
    const error = await caught(r.run(op.run, { idempotent: true }));
    expect(op.calls).toBe(5);
    expect(retried).toEqual([1, 2, 3, 4]);
    expect(r.state()).toBe('OPEN');
    expect(error).toMatchObject({ kind: 'unavailable' });
  });

  it('ends a call that does not answer in time with a timeout error and aborts it', async () => {
    const { r } = setup({ timeoutMs: 5, retries: 0 });
    let seen: AbortSignal | undefined;
    const hang = (signal: AbortSignal) => {
      seen = signal;
      return new Promise<never>(() => undefined);
    };
    const error = await caught(r.run(hang, { idempotent: false }));
    expect(error).toBeInstanceOf(ResilienceError);
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(seen?.aborted).toBe(true);
  });

  it('counts timeouts as failures: five open the breaker', async () => {
    const { r } = setup({ retries: 0 });
    const hang = () => new Promise<never>(() => undefined);
    for (let i = 0; i < 5; i++) await caught(r.run(hang, { idempotent: false, timeoutMs: 2 }));
    expect(r.state()).toBe('OPEN');
  });

  it('a caller abort is neither a timeout nor a failure', async () => {
    const { r } = setup({ retries: 3 });
    const controller = new AbortController();
    const op = flaky('x', Infinity);
    controller.abort();
    for (let i = 0; i < 6; i++)
      await caught(r.run(op.run, { idempotent: true, signal: controller.signal }));
    expect(r.state()).toBe('CLOSED');
  });
});

describe('Resilience fallback', () => {
  it('answers the last good value, stale and with its fetch time, while the breaker is open', async () => {
    const { r, clock } = setup();
    const fetchedAt = new Date(clock.t).toISOString();
    await r.read(KEY, flaky({ name: 'A' }).run);
    clock.t += 5_000;
    await openIt(r);
    const op = flaky({ name: 'B' });
    const answer = await r.read(KEY, op.run);
    expect(op.calls).toBe(0);
    expect(answer).toEqual({ value: { name: 'A' }, fetchedAt, stale: true });
  });

  it('answers the last good value when a read fails as unavailable or times out', async () => {
    const { r } = setup({ retries: 1 });
    await r.read(KEY, flaky('v1').run);
    expect(await r.read(KEY, flaky('v2', Infinity).run)).toMatchObject({
      value: 'v1',
      stale: true,
    });
    const hang = () => new Promise<never>(() => undefined);
    expect(await r.read(KEY, hang, { timeoutMs: 2 })).toMatchObject({ value: 'v1', stale: true });
  });

  it('keeps answers per key and fails when none is kept', async () => {
    const { r } = setup();
    await r.read(KEY, flaky('summary').run);
    await openIt(r);
    const other = lastGoodKey('pat-2', 'summary');
    expect(await caught(r.read(other, flaky('x').run))).toMatchObject({ kind: 'circuit_open' });
    expect((await r.read(KEY, flaky('x').run)).value).toBe('summary');
  });

  it('does not fall back on a 404 or a rejected read', async () => {
    const { r } = setup();
    await r.read(KEY, flaky('v1').run);
    const gone = flaky('x', Infinity, () => failure('not_found', 404));
    expect(await caught(r.read(KEY, gone.run))).toMatchObject({ kind: 'not_found' });
    expect(r.fallbackActive()).toBe(false);
  });

  it('does not answer an expired value', async () => {
    const { r, clock } = setup({ lastGoodTtlMs: 1_000 });
    await r.read(KEY, flaky('v1').run);
    clock.t += 1_000;
    expect(await caught(r.read(KEY, flaky('x', Infinity).run))).toMatchObject({
      kind: 'unavailable',
    });
  });

  it('a failing store neither fails a good read nor hides the error of a bad one', async () => {
    const broken = {
      get: () => Promise.reject(new Error('store down')),
      set: () => Promise.reject(new Error('store down')),
    };
    const { r } = setup({ store: broken });
    expect(await r.read(KEY, flaky('v1').run)).toMatchObject({ value: 'v1', stale: false });
    expect(await caught(r.read(KEY, flaky('x', Infinity).run))).toMatchObject({
      kind: 'unavailable',
    });
  });
});

describe('Resilience degradation events and gauge', () => {
  it('fires degradation.activated once and degradation.recovered once the breaker closes', async () => {
    const { r, clock, events } = setup();
    await r.read(KEY, flaky('v1').run);
    await openIt(r);
    expect(events).toEqual([]);
    await r.read(KEY, flaky('x').run);
    await r.read(KEY, flaky('x').run);
    expect(r.fallbackActive()).toBe(true);
    expect(events).toEqual([
      {
        type: 'degradation.activated',
        dependency: 'ehr',
        reason: 'circuit_open',
        at: new Date(clock.t).toISOString(),
      },
    ]);
    clock.t += 60_000;
    for (let i = 0; i < 3; i++) await r.read(KEY, flaky('v2').run);
    expect(r.state()).toBe('CLOSED');
    expect(r.fallbackActive()).toBe(false);
    expect(events.map((e) => e.type)).toEqual(['degradation.activated', 'degradation.recovered']);
    await r.read(KEY, flaky('v3').run);
    expect(events).toHaveLength(2);
  });

  it('recovers after a fallback served while the breaker stayed closed on the next success', async () => {
    const { r, events } = setup({ retries: 0 });
    await r.read(KEY, flaky('v1').run);
    await r.read(KEY, flaky('x', Infinity).run);
    expect(events).toMatchObject([{ type: 'degradation.activated', reason: 'unavailable' }]);
    await r.read(KEY, flaky('v2').run);
    expect(events.map((e) => e.type)).toEqual(['degradation.activated', 'degradation.recovered']);
  });

  it('reports 0 closed, 2 open, 1 half-open to the gauge hook', async () => {
    const { r, clock, gauge } = setup();
    expect(gauge).toEqual([0]);
    await openIt(r);
    clock.t += 60_000;
    await r.run(flaky('x').run, { idempotent: true });
    await caught(r.run(flaky('x', Infinity).run, { idempotent: true }));
    clock.t += 60_000;
    expect(r.gaugeValue()).toBe(1);
    for (let i = 0; i < 3; i++) await r.run(flaky('x').run, { idempotent: false });
    expect(gauge).toEqual([0, 2, 1, 2, 1, 0]);
    expect(r.gaugeValue()).toBe(0);
  });

  it('lets listeners go', async () => {
    const { r } = setup();
    const states: string[] = [];
    const events: DegradationEvent[] = [];
    r.onStateChange((s) => states.push(s))();
    r.onDegradation((e) => events.push(e))();
    await r.read(KEY, flaky('v1').run);
    await openIt(r);
    await r.read(KEY, flaky('x').run);
    expect(states).toEqual([]);
    expect(events).toEqual([]);
  });
});

describe('Resilience probes (issue 23)', () => {
  /** A probe of a server that is down until `up()`, counting its calls. */
  function server() {
    const s = {
      down: true,
      probes: 0,
      hold: undefined as Promise<void> | undefined,
      probe: async (signal: AbortSignal) => {
        s.probes += 1;
        await s.hold;
        signal.throwIfAborted();
        if (s.down) throw unavailable();
      },
    };
    return s;
  }
  const probed = (s: ReturnType<typeof server>, options: ResilienceOptions = {}) =>
    setup({
      now: Date.now,
      halfOpenAfterMs: 60,
      probeIntervalMs: 20,
      probe: s.probe,
      ...options,
    });
  const elapsed = async (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('closes on probes alone once the server is back: no caller needed', async () => {
    const s = server();
    const { r, gauge, events } = probed(s);
    await r.read(KEY, flaky('v1').run);
    expect(r.probing).toBe(false);
    await openIt(r);
    // A caller answered from the last good value: the fallback is on.
    expect(await r.read(KEY, flaky('x').run)).toMatchObject({ value: 'v1', stale: true });
    expect(r.probing).toBe(true);
    s.down = false;
    await vi.waitFor(() => {
      expect(r.state()).toBe('CLOSED');
    });
    // No probe before the half-open wait; then three in a row, one interval apart.
    expect(s.probes).toBe(3);
    expect(gauge).toEqual([0, 2, 1, 0]);
    expect(events.map((e) => e.type)).toEqual(['degradation.activated', 'degradation.recovered']);
    await vi.waitFor(() => {
      expect(r.probing).toBe(false);
    });
    // Nothing probes while closed.
    await elapsed(100);
    expect(s.probes).toBe(3);
  });

  it('a failing probe opens it again for another full wait', async () => {
    const s = server();
    const { r, gauge } = probed(s, { halfOpenAfterMs: 400 });
    await openIt(r);
    const openedAt = Date.now();
    await vi.waitFor(() => {
      expect(s.probes).toBe(1);
    });
    const probedAt = Date.now();
    expect(probedAt - openedAt).toBeGreaterThanOrEqual(390);
    expect(r.state()).toBe('OPEN');
    // The next probe waits the whole half-open time again, not the probe interval.
    await elapsed(Math.max(0, probedAt + 150 - Date.now()));
    expect(s.probes).toBe(1);
    s.down = false;
    await vi.waitFor(() => {
      expect(r.state()).toBe('CLOSED');
    });
    expect(s.probes).toBe(4);
    expect(gauge).toEqual([0, 2, 1, 2, 1, 0]);
  });

  it("refuses callers' calls while half-open: they are never the trials", async () => {
    const s = server();
    s.down = false;
    let release = (): void => undefined;
    s.hold = new Promise((resolve) => {
      release = resolve;
    });
    const { r } = probed(s);
    await r.read(KEY, flaky('v1').run);
    await openIt(r);
    await vi.waitFor(() => {
      expect(s.probes).toBe(1);
    });
    expect(r.state()).toBe('HALF_OPEN');
    const op = flaky('fresh');
    expect(await r.read(KEY, op.run)).toMatchObject({ value: 'v1', stale: true });
    expect(await caught(r.run(op.run, { idempotent: false }))).toMatchObject({
      kind: 'circuit_open',
    });
    expect(op.calls).toBe(0);
    s.hold = undefined;
    release();
    await vi.waitFor(() => {
      expect(r.state()).toBe('CLOSED');
    });
    expect(await r.read(KEY, op.run)).toMatchObject({ value: 'fresh', stale: false });
  });

  it('takes the configured number of probe successes', async () => {
    const s = server();
    s.down = false;
    const { r } = probed(s, { halfOpenSuccesses: 1 });
    await openIt(r);
    await vi.waitFor(() => {
      expect(r.state()).toBe('CLOSED');
    });
    expect(s.probes).toBe(1);
  });

  it('stops probing on close, a probe in flight included', async () => {
    const s = server();
    let seen: AbortSignal | undefined;
    const { r } = probed(s, {
      probe: (signal) => {
        seen = signal;
        s.probes += 1;
        return new Promise<never>(() => undefined);
      },
    });
    await openIt(r);
    await vi.waitFor(() => {
      expect(s.probes).toBe(1);
    });
    await r.close();
    expect(seen?.aborted).toBe(true);
    expect(r.probing).toBe(false);
    await elapsed(150);
    expect(s.probes).toBe(1);
  });
});

describe('countsAsFailure and MemoryLastGoodStore', () => {
  it.each([
    [failure('unavailable', 503), true],
    [failure('unavailable', 429), true],
    [failure('timeout', 408), true],
    [failure('malformed'), true],
    [new Error('socket hang up'), true],
    [new ResilienceError('ehr', 'timeout'), true],
    [new ResilienceError('ehr', 'circuit_open'), false],
    [failure('not_found', 404), false],
    [failure('rejected', 422), false],
    [failure('unauthorized', 401), false],
    [Object.assign(new Error('plain 400'), { status: 400 }), false],
  ])('%s counts as a failure: %s', (error, expected) => {
    expect(countsAsFailure(error)).toBe(expected);
  });

  it('keeps entries for their TTL', async () => {
    const clock = { t: 0 };
    const store = new MemoryLastGoodStore(() => clock.t);
    await store.set('k', { value: 1, fetchedAt: 'then' }, 100);
    clock.t = 99;
    expect(await store.get('k')).toEqual({ value: 1, fetchedAt: 'then' });
    clock.t = 100;
    expect(await store.get('k')).toBeUndefined();
  });
});
