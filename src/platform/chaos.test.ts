import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppError } from '../errors.js';
import { Chaos, ChaosError, CHAOS_DEPENDENCIES, type ChaosFault } from './chaos.js';
import { createLogger } from './logger.js';

/** The AppError `fn` throws, or a failure when it throws none. */
function appErrorOf(fn: () => void): AppError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected an AppError');
}

/** Whether `promise` has settled, after the microtasks queued so far ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return done;
}

const quiet = { latency_ms: 0, error_rate: 0 };

describe('Chaos', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('refuses to set a fault while disabled, and injects nothing', async () => {
    const chaos = new Chaos({ enabled: false, random: () => 0 });
    const refused = appErrorOf(() => {
      chaos.set('ehr', { latency_ms: 0, error_rate: 1 });
    });
    expect(refused).toMatchObject({ code: 'CONFLICT', status: 409 });
    await expect(chaos.inject('ehr')).resolves.toBeUndefined();
    chaos.reset();
    const status = chaos.status();
    expect(status.enabled).toBe(false);
    for (const d of CHAOS_DEPENDENCIES) {
      expect(status.dependencies[d]).toEqual({
        latency_ms: 0,
        error_rate: 0,
        calls: 0,
        injected_errors: 0,
        delayed_calls: 0,
      });
    }
  });

  it('accepts the range limits and refuses values outside them, naming each field', () => {
    const chaos = new Chaos({ enabled: true });
    chaos.set('llm', { latency_ms: 60_000, error_rate: 1 });
    chaos.set('stt', { latency_ms: 0, error_rate: 0 });
    expect(chaos.status().dependencies.llm).toMatchObject({ latency_ms: 60_000, error_rate: 1 });
    const bad: [ChaosFault, string[]][] = [
      [{ latency_ms: -1, error_rate: 0 }, ['latency_ms']],
      [{ latency_ms: 60_001, error_rate: 0 }, ['latency_ms']],
      [{ latency_ms: 1.5, error_rate: 0 }, ['latency_ms']],
      [{ latency_ms: Number.NaN, error_rate: 0 }, ['latency_ms']],
      [{ latency_ms: 0, error_rate: -0.1 }, ['error_rate']],
      [{ latency_ms: 0, error_rate: 1.01 }, ['error_rate']],
      [{ latency_ms: 0, error_rate: Number.NaN }, ['error_rate']],
      [{ latency_ms: '5', error_rate: '1' } as unknown as ChaosFault, ['latency_ms', 'error_rate']],
    ];
    for (const [fault, fields] of bad) {
      const error = appErrorOf(() => {
        chaos.set('tts', fault);
      });
      expect(error.code).toBe('VALIDATION_ERROR');
      expect((error.details as { field: string }[]).map((d) => d.field)).toEqual(fields);
    }
    const unknown = appErrorOf(() => {
      chaos.set('db' as never, quiet);
    });
    expect(unknown.details).toEqual([{ field: 'dependency', message: expect.any(String) }]);
    // Nothing refused was applied.
    expect(chaos.status().dependencies.tts).toMatchObject(quiet);
  });

  it('fails every call at error_rate 1 and none at 0, whatever the random draw', async () => {
    const high = new Chaos({ enabled: true, random: () => 0.999_999 });
    high.set('ehr', { latency_ms: 0, error_rate: 1 });
    for (let i = 0; i < 3; i++) {
      await expect(high.inject('ehr')).rejects.toBeInstanceOf(ChaosError);
    }
    await expect(high.inject('llm')).resolves.toBeUndefined();
    const low = new Chaos({ enabled: true, random: () => 0 });
    low.set('ehr', { latency_ms: 0, error_rate: 0 });
    await expect(low.inject('ehr')).resolves.toBeUndefined();
    expect(high.status().dependencies.ehr).toMatchObject({ calls: 3, injected_errors: 3 });
    expect(high.status().dependencies.llm).toMatchObject({ calls: 1, injected_errors: 0 });
  });

  it('fails a call when the draw is below error_rate', async () => {
    const draws = [0.49, 0.5];
    const chaos = new Chaos({ enabled: true, random: () => draws.shift() ?? 1 });
    chaos.set('stt', { latency_ms: 0, error_rate: 0.5 });
    const failed = await chaos.inject('stt').catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ChaosError);
    expect((failed as ChaosError).dependency).toBe('stt');
    await expect(chaos.inject('stt')).resolves.toBeUndefined();
  });

  it('waits the added latency, then fails', async () => {
    vi.useFakeTimers();
    const chaos = new Chaos({ enabled: true, random: () => 0 });
    chaos.set('tts', { latency_ms: 1000, error_rate: 1 });
    const call = chaos.inject('tts');
    const outcome = call.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(999);
    expect(await settled(outcome)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome).toBeInstanceOf(ChaosError);
    expect(chaos.status().dependencies.tts).toMatchObject({
      calls: 1,
      delayed_calls: 1,
      injected_errors: 1,
    });
  });

  it('stops waiting as soon as the signal aborts, with its reason and no injected error', async () => {
    const chaos = new Chaos({ enabled: true, random: () => 0 });
    chaos.set('llm', { latency_ms: 60_000, error_rate: 1 });
    const controller = new AbortController();
    const call = chaos.inject('llm', controller.signal);
    const reason = new Error('barge-in');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    await expect(chaos.inject('llm', AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(chaos.status().dependencies.llm).toMatchObject({
      calls: 2,
      delayed_calls: 2,
      injected_errors: 0,
    });
  });

  it('resets faults and counters; status is a copy', async () => {
    const chaos = new Chaos({ enabled: true, random: () => 0 });
    chaos.set('ehr', { latency_ms: 0, error_rate: 1 });
    await chaos.inject('ehr').catch(() => undefined);
    const before = chaos.status();
    before.dependencies.ehr.error_rate = 0;
    expect(chaos.status().dependencies.ehr).toMatchObject({ error_rate: 1, injected_errors: 1 });
    chaos.reset();
    expect(chaos.status().dependencies.ehr).toEqual({
      ...quiet,
      calls: 0,
      injected_errors: 0,
      delayed_calls: 0,
    });
    await expect(chaos.inject('ehr')).resolves.toBeUndefined();
  });

  it('logs which dependency changed, and nothing else', () => {
    const lines: string[] = [];
    const log = createLogger({ logLevel: 'info' }, { write: (line: string) => lines.push(line) });
    const chaos = new Chaos({ enabled: true, log });
    chaos.set('llm', { latency_ms: 12_345, error_rate: 0.25 });
    chaos.reset();
    expect(lines).toHaveLength(2);
    const [changed, reset] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(changed).toMatchObject({ level: 40, dependency: 'llm', msg: 'chaos fault changed' });
    expect(lines[0]).not.toContain('12345');
    expect(lines[0]).not.toContain('0.25');
    expect(reset).toMatchObject({ level: 40, msg: 'chaos faults reset' });
  });
});
