import { setTimeout as sleep } from 'node:timers/promises';
import {
  ExponentialBackoff,
  TaskCancelledError,
  TimeoutStrategy,
  decorrelatedJitterGenerator,
  handleWhen,
  retry,
  timeout,
  type RetryPolicy,
} from 'cockatiel';
import {
  CircuitBreaker,
  countsAsFailure,
  GAUGE_VALUE,
  ResilienceError,
  type BreakerOptions,
  type BreakerState,
  type GaugeValue,
  type StateListener,
} from './breaker.js';

import { MemoryLastGoodStore, type LastGood, type LastGoodStore } from './last-good-store.js';

export {
  MemoryLastGoodStore,
  lastGoodKey,
  type LastGood,
  type LastGoodStore,
} from './last-good-store.js';
export {
  ResilienceError,
  countsAsFailure,
  isResilienceError,
  type BreakerState,
  type GaugeValue,
  type ResilienceErrorKind,
} from './breaker.js';

/**
 * The resilience layer around the EHR (issue 13 item 4): each call goes through a per-call
 * timeout and the circuit breaker; reads (idempotent) are also retried with exponential backoff and
 * jitter, writes never. A read that succeeds is kept as the last good answer for its key; while the
 * dependency is unavailable (breaker open, timeout, or a failure) a read answers that value marked
 * stale with the time it was fetched. Nothing here logs: listeners get ids and states only.
 */

/** What a read answers: fresh from the dependency, or the last good value while it is away. */
export interface Labelled<T> extends LastGood<T> {
  stale: boolean;
}

/** Why a read was answered from the fallback. */
export type DegradationReason = 'circuit_open' | 'timeout' | 'unavailable';

export type DegradationEvent =
  | { type: 'degradation.activated'; dependency: string; reason: DegradationReason; at: string }
  | { type: 'degradation.recovered'; dependency: string; at: string };

export interface ResilienceOptions extends Partial<Omit<BreakerOptions, 'isFailure'>> {
  /** Whether an error counts against the dependency (default countsAsFailure). */
  isFailure?: (error: unknown) => boolean;
  /** Per-call timeout (10,000 ms); `run` and `read` may override it. */
  timeoutMs?: number;
  /** Retries of a failed read after the first attempt (2). */
  retries?: number;
  /** First retry delay (200 ms), doubling with decorrelated jitter up to `retryMaxDelayMs`. */
  retryInitialDelayMs?: number;
  retryMaxDelayMs?: number;
  /** Last good answers (in memory when absent) and how long they are kept (24 h). */
  store?: LastGoodStore;
  lastGoodTtlMs?: number;
  /** Receives 0 closed, 1 half-open, 2 open at start and on every change. */
  onGauge?: (value: GaugeValue) => void;
  onDegradation?: (event: DegradationEvent) => void;
  /** Told before each retry of a read (for metrics): which retry and the delay before it. */
  onRetry?: (retry: { attempt: number; delayMs: number }) => void;
  /**
   * A cheap read of the dependency itself (the FHIR server's `metadata`). Given, the breaker is
   * closed by probes alone: while it is not CLOSED, callers' calls are refused (reads answer the
   * last good value) and, once the half-open wait has passed, `probe` runs through the breaker
   * every `probeIntervalMs` until `halfOpenSuccesses` in a row close it (a failing one opens it
   * again for another wait). No probe runs, and no timer is set, while it is CLOSED.
   */
  probe?: (signal: AbortSignal) => Promise<unknown>;
  /** Between a successful probe and the next (1,000 ms). */
  probeIntervalMs?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Waits `ms` on an unreferenced timer: true when the time is up, false when `signal` aborted. */
async function pauseFor(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal, ref: false });
    return true;
  } catch {
    return false;
  }
}

export class Resilience {
  readonly dependency: string;
  private readonly breaker: CircuitBreaker;
  private readonly retryPolicy: RetryPolicy;
  private readonly isFailure: (error: unknown) => boolean;
  private readonly now: () => number;
  private readonly timeoutMs: number;
  private readonly store: LastGoodStore;
  private readonly lastGoodTtlMs: number;
  private readonly degradationListeners = new Set<(event: DegradationEvent) => void>();
  /** Last good values being kept: not awaited by the read (see `read`), awaited by `idle`. */
  private readonly keeping = new Set<Promise<void>>();
  private degraded = false;
  private readonly probe: ((signal: AbortSignal) => Promise<unknown>) | undefined;
  private readonly probeIntervalMs: number;
  /** Aborts the probe loop's wait and its probe on `close`. */
  private readonly stopping = new AbortController();
  private probeLoop: Promise<void> | undefined;

  constructor(options: ResilienceOptions = {}) {
    this.dependency = options.dependency ?? 'ehr';
    this.isFailure = options.isFailure ?? countsAsFailure;
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.store = options.store ?? new MemoryLastGoodStore(this.now);
    this.lastGoodTtlMs = options.lastGoodTtlMs ?? 24 * 60 * 60 * 1000;
    this.probe = options.probe;
    this.probeIntervalMs = options.probeIntervalMs ?? 1_000;
    this.breaker = new CircuitBreaker({
      ...options,
      dependency: this.dependency,
      now: this.now,
      isFailure: this.isFailure,
      trialsByProbeOnly: this.probe !== undefined,
    });
    this.retryPolicy = retry(
      handleWhen((e) => this.retryable(e)),
      {
        maxAttempts: options.retries ?? 2,
        backoff: new ExponentialBackoff({
          initialDelay: options.retryInitialDelayMs ?? 200,
          maxDelay: options.retryMaxDelayMs ?? 2_000,
          generator: decorrelatedJitterGenerator,
        }),
      },
    );
    this.hook(options);
  }

  /** Wires the option callbacks; degradation recovers whenever the breaker closes. */
  private hook(options: ResilienceOptions): void {
    const onRetry = options.onRetry;
    if (onRetry !== undefined) {
      this.retryPolicy.onRetry((e) => {
        onRetry({ attempt: e.attempt, delayMs: e.delay });
      });
    }
    if (options.onDegradation !== undefined) this.degradationListeners.add(options.onDegradation);
    const onGauge = options.onGauge;
    if (onGauge !== undefined) {
      onGauge(this.breaker.gaugeValue());
      this.breaker.onStateChange((state) => {
        onGauge(GAUGE_VALUE[state]);
      });
    }
    this.breaker.onStateChange((state) => {
      if (state === 'CLOSED') this.recover();
      else this.startProbing();
    });
  }

  /** True while the probe loop runs (only while the breaker is not CLOSED). */
  get probing(): boolean {
    return this.probeLoop !== undefined;
  }

  /** Stops the probe loop (and a probe in flight) for good; resolves when it has ended. */
  async close(): Promise<void> {
    this.stopping.abort();
    await this.probeLoop;
  }

  private startProbing(): void {
    if (this.probe === undefined || this.probeLoop !== undefined || this.stopping.signal.aborted) {
      return;
    }
    const loop = this.probeUntilClosed(this.probe).finally(() => {
      this.probeLoop = undefined;
      // Opened again between the loop's last look and its end: probe again.
      if (this.breaker.state() !== 'CLOSED') this.startProbing();
    });
    this.probeLoop = loop;
  }

  /**
   * Waits out the half-open wait, then probes: after a success the next probe comes
   * `probeIntervalMs` later, after a failure (the breaker opened again) when the new wait is
   * over. Ends when the breaker is CLOSED or on `close`.
   */
  private async probeUntilClosed(probe: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
    const stop = this.stopping.signal;
    let succeeded = false;
    while (!stop.aborted && this.breaker.state() !== 'CLOSED') {
      const waitMs = this.breaker.state() === 'OPEN' ? this.breaker.remainingMs() : 0;
      const pause = Math.max(waitMs, succeeded ? this.probeIntervalMs : 0);
      if (pause > 0 && !(await pauseFor(pause, stop))) return;
      if (this.breaker.state() !== 'HALF_OPEN') continue;
      succeeded = await this.attempt(probe, this.timeoutMs, stop, true).then(
        () => true,
        () => false,
      );
    }
  }

  state(): BreakerState {
    return this.breaker.state();
  }

  gaugeValue(): GaugeValue {
    return this.breaker.gaugeValue();
  }

  onStateChange(listener: StateListener): () => void {
    return this.breaker.onStateChange(listener);
  }

  onDegradation(listener: (event: DegradationEvent) => void): () => void {
    this.degradationListeners.add(listener);
    return () => this.degradationListeners.delete(listener);
  }

  /** True from the first fallback answer until the dependency is healthy again. */
  fallbackActive(): boolean {
    return this.degraded;
  }

  /**
   * Runs one operation through timeout and breaker, retried when `idempotent`. `op` receives a
   * signal that aborts on timeout or when `signal` does. Throws ResilienceError (`circuit_open`,
   * `timeout`) or the operation's own error.
   */
  async run<T>(
    op: (signal: AbortSignal) => Promise<T>,
    options: CallOptions & { idempotent: boolean },
  ): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const value = options.idempotent
      ? await this.retryPolicy.execute(
          ({ signal }) => this.attempt(op, timeoutMs, signal),
          options.signal,
        )
      : await this.attempt(op, timeoutMs, options.signal);
    if (this.degraded && this.breaker.state() === 'CLOSED') this.recover();
    return value;
  }

  /**
   * A read kept under `key` (see lastGoodKey): fresh when the dependency answers, else the last
   * good value (stale) when the dependency is unavailable and one is kept; otherwise the error.
   */
  async read<T>(
    key: string,
    op: (signal: AbortSignal) => Promise<T>,
    options: CallOptions = {},
  ): Promise<Labelled<T>> {
    let value: T;
    try {
      value = await this.run(op, { ...options, idempotent: true });
    } catch (error) {
      const kept = await this.fallback(key, error, options.signal);
      if (kept === undefined) throw error;
      return { value: kept.value as T, fetchedAt: kept.fetchedAt, stale: true };
    }
    const fetchedAt = new Date(this.now()).toISOString();
    // Kept without making the caller wait (a store round trip was a fifth of the service's own
    // latency, BENCHMARKS.md "EHR"); a store that fails must not fail a read that succeeded. A
    // later read on the same connection still finds it: the store answers commands in order.
    const keeping = this.store
      .set(key, { value, fetchedAt }, this.lastGoodTtlMs)
      .catch(() => undefined);
    this.keeping.add(keeping);
    void keeping.finally(() => this.keeping.delete(keeping));
    return { value, fetchedAt, stale: false };
  }

  /** Resolves when every last good value being kept is written (or failed). */
  async idle(): Promise<void> {
    while (this.keeping.size > 0) await Promise.allSettled([...this.keeping]);
  }

  private async attempt<T>(
    op: (signal: AbortSignal) => Promise<T>,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    probe = false,
  ): Promise<T> {
    return this.breaker.execute(
      async (callSignal) => {
        try {
          return await timeout(timeoutMs, TimeoutStrategy.Aggressive).execute(
            (ctx) => op(ctx.signal),
            callSignal,
          );
        } catch (error) {
          if (error instanceof TaskCancelledError && !callSignal.aborted) {
            throw new ResilienceError(this.dependency, 'timeout', { cause: error });
          }
          throw error;
        }
      },
      signal,
      probe,
    );
  }

  /**
   * Retried: the dependency's failures not marked `retryable: false`, unless the breaker has just
   * opened; never a refusal.
   */
  private retryable(error: unknown): boolean {
    if (error instanceof ResilienceError && error.kind === 'circuit_open') return false;
    if (this.breaker.state() === 'OPEN') return false;
    const marked = (error as { retryable?: unknown } | null)?.retryable;
    return this.isFailure(error) && marked !== false;
  }

  private async fallback(
    key: string,
    error: unknown,
    signal: AbortSignal | undefined,
  ): Promise<LastGood | undefined> {
    const refused = error instanceof ResilienceError;
    if (signal?.aborted === true || !(refused || this.isFailure(error))) return undefined;
    const kept = await this.store.get(key).catch(() => undefined);
    if (kept === undefined) return undefined;
    this.activate(refused ? error.kind : 'unavailable');
    return kept;
  }

  private activate(reason: DegradationReason): void {
    if (this.degraded) return;
    this.degraded = true;
    const at = new Date(this.now()).toISOString();
    this.emit({ type: 'degradation.activated', dependency: this.dependency, reason, at });
  }

  private recover(): void {
    if (!this.degraded) return;
    this.degraded = false;
    const at = new Date(this.now()).toISOString();
    this.emit({ type: 'degradation.recovered', dependency: this.dependency, at });
  }

  private emit(event: DegradationEvent): void {
    for (const listener of this.degradationListeners) listener(event);
  }
}
