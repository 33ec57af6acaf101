import { AppError, type FieldError } from '../errors.js';
import type { Logger } from './logger.js';

/**
 * Fault injection for the external dependencies (issue 13 item 5, the operator's chaos endpoint):
 * added latency and an error rate per dependency, so that the circuit breaker, the fallback and the
 * error paths can be exercised on a running instance. Only when CHAOS_ENABLED=true: otherwise no
 * provider is wrapped and `set` refuses. Settings live in this process only (per instance, lost on
 * restart); an operator sets each instance on its own.
 */

export const CHAOS_DEPENDENCIES = ['ehr', 'llm', 'stt', 'tts'] as const;
export type ChaosDependency = (typeof CHAOS_DEPENDENCIES)[number];

/** latency_ms: 0..60000, added before each call; error_rate: 0..1, the share of calls failed. */
export interface ChaosFault {
  latency_ms: number;
  error_rate: number;
}

export interface ChaosDependencyStatus extends ChaosFault {
  /** Calls seen since start or the last reset. */
  calls: number;
  injected_errors: number;
  delayed_calls: number;
}

export interface ChaosStatus {
  enabled: boolean;
  dependencies: Record<ChaosDependency, ChaosDependencyStatus>;
}

export const MAX_CHAOS_LATENCY_MS = 60_000;

/** The failure `inject` throws; each wrapper turns it into its provider's own error shape. */
export class ChaosError extends Error {
  constructor(readonly dependency: ChaosDependency) {
    super(`${dependency} failure injected (chaos)`);
    this.name = 'ChaosError';
  }
}

const DONE: Promise<void> = Promise.resolve();

const zero = (): ChaosDependencyStatus => ({
  latency_ms: 0,
  error_rate: 0,
  calls: 0,
  injected_errors: 0,
  delayed_calls: 0,
});

export class Chaos {
  readonly enabled: boolean;
  private readonly random: () => number;
  private readonly log: Logger | undefined;
  private state = Chaos.fresh();

  constructor(options: { enabled: boolean; random?: () => number; log?: Logger }) {
    this.enabled = options.enabled;
    this.random = options.random ?? Math.random;
    this.log = options.log;
  }

  private static fresh(): Record<ChaosDependency, ChaosDependencyStatus> {
    return { ehr: zero(), llm: zero(), stt: zero(), tts: zero() };
  }

  status(): ChaosStatus {
    const dependencies = Chaos.fresh();
    for (const d of CHAOS_DEPENDENCIES) dependencies[d] = { ...this.state[d] };
    return { enabled: this.enabled, dependencies };
  }

  /**
   * Sets one dependency's fault (counters kept). Refused with CONFLICT while chaos is disabled,
   * with VALIDATION_ERROR naming each bad field otherwise.
   */
  set(dependency: ChaosDependency, fault: ChaosFault): void {
    if (!this.enabled) {
      throw new AppError('CONFLICT', 'Fault injection is disabled on this instance');
    }
    const problems = checkFault(dependency, fault);
    if (problems.length > 0) {
      throw new AppError('VALIDATION_ERROR', 'Request validation failed', problems);
    }
    const current = this.state[dependency];
    current.latency_ms = fault.latency_ms;
    current.error_rate = fault.error_rate;
    this.log?.warn({ dependency }, 'chaos fault changed');
  }

  /** Clears every fault and counter; nothing to do while disabled. */
  reset(): void {
    if (!this.enabled) return;
    this.state = Chaos.fresh();
    this.log?.warn('chaos faults reset');
  }

  /**
   * Before a dependency call: waits the added latency (rejecting with the signal's reason when it
   * aborts), then throws ChaosError with probability error_rate. Disabled or without a fault it
   * only counts the call and answers an already settled promise.
   */
  inject(dependency: ChaosDependency, signal?: AbortSignal): Promise<void> {
    if (!this.enabled) return DONE;
    const s = this.state[dependency];
    s.calls += 1;
    const { latency_ms: latency, error_rate: rate } = s;
    if (latency === 0 && rate === 0) return DONE;
    const fail = rate > 0 && this.random() < rate;
    if (latency === 0) {
      return fail ? Promise.reject(this.failure(s, dependency)) : DONE;
    }
    s.delayed_calls += 1;
    return delay(latency, signal).then(() => {
      if (fail) throw this.failure(s, dependency);
    });
  }

  private failure(s: ChaosDependencyStatus, dependency: ChaosDependency): ChaosError {
    s.injected_errors += 1;
    return new ChaosError(dependency);
  }
}

function checkFault(dependency: unknown, fault: ChaosFault): FieldError[] {
  const problems: FieldError[] = [];
  if (!(CHAOS_DEPENDENCIES as readonly unknown[]).includes(dependency)) {
    problems.push({
      field: 'dependency',
      message: `must be one of ${CHAOS_DEPENDENCIES.join(', ')}`,
    });
  }
  const latency = fault.latency_ms as unknown;
  if (
    !Number.isInteger(latency) ||
    (latency as number) < 0 ||
    (latency as number) > MAX_CHAOS_LATENCY_MS
  ) {
    problems.push({
      field: 'latency_ms',
      message: `must be an integer from 0 to ${MAX_CHAOS_LATENCY_MS}`,
    });
  }
  const rate = fault.error_rate as unknown;
  if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) {
    problems.push({ field: 'error_rate', message: 'must be a number from 0 to 1' });
  }
  return problems;
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = (): Error =>
      (signal?.reason ?? new DOMException('The operation was aborted', 'AbortError')) as Error;
    if (signal?.aborted === true) {
      reject(aborted());
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(aborted());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
