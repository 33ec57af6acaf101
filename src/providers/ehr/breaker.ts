import {
  BrokenCircuitError,
  circuitBreaker,
  type CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  CountBreaker,
  handleWhen,
  type IBackoff,
  type IBreaker,
  type IHalfOpenAfterBackoffContext,
} from 'cockatiel';
import { ProviderError } from '../llm/types.js';

/**
 * The EHR circuit breaker (issue 13 item 4) on cockatiel's CircuitBreakerPolicy: it opens after
 * `consecutiveFailures` failures in a row or when more than `failureRate` of the last `window`
 * calls failed; `halfOpenAfterMs` later it lets trial calls through, and `halfOpenSuccesses`
 * successful ones close it while a single failing one opens it again. The wait is measured on the
 * injected clock, not on cockatiel's own `Date.now()`. With `trialsByProbeOnly` (issue 23) the
 * trial calls are the caller's probes alone: every other call is refused until it is CLOSED.
 */

export type BreakerState = 'CLOSED' | 'OPEN' | 'HALF_OPEN';

/** `circuit_breaker_state{dependency}` (src/platform/metrics.ts): 0 closed, 1 half-open, 2 open. */
export type GaugeValue = 0 | 1 | 2;

export const GAUGE_VALUE: Readonly<Record<BreakerState, GaugeValue>> = {
  CLOSED: 0,
  HALF_OPEN: 1,
  OPEN: 2,
};

export type ResilienceErrorKind = 'circuit_open' | 'timeout';

/**
 * A call the resilience layer itself ended: refused while the breaker is open (`circuit_open`,
 * with how long until trial calls are let through) or not answered in time (`timeout`).
 */
export class ResilienceError extends ProviderError {
  readonly kind: ResilienceErrorKind;

  constructor(
    dependency: string,
    kind: ResilienceErrorKind,
    options: { retryAfterMs?: number; cause?: unknown } = {},
  ) {
    const message =
      kind === 'circuit_open'
        ? `${dependency} unavailable: circuit breaker open`
        : `${dependency} did not answer in time`;
    super(dependency, message, { retryable: kind === 'timeout', ...options });
    this.name = 'ResilienceError';
    this.kind = kind;
  }
}

export const isResilienceError = (error: unknown, kind?: ResilienceErrorKind): boolean =>
  error instanceof ResilienceError && (kind === undefined || error.kind === kind);

/**
 * Whether an error is the dependency's fault: anything but a 4xx answer (other than 408 and 429),
 * an error of kind `rejected` or `not_found`, or a refusal by the open breaker itself.
 */
export function countsAsFailure(error: unknown): boolean {
  if (error instanceof ResilienceError) return error.kind === 'timeout';
  if (typeof error !== 'object' || error === null) return true;
  const { kind, status } = error as { kind?: unknown; status?: unknown };
  if (kind === 'rejected' || kind === 'not_found') return false;
  const clientError = typeof status === 'number' && status >= 400 && status < 500;
  return !clientError || status === 408 || status === 429;
}

/** Opens when any of its breakers says so; every one of them sees every call. */
export class AnyOfBreaker implements IBreaker {
  constructor(private readonly breakers: readonly IBreaker[]) {}

  get state(): unknown {
    return this.breakers.map((b) => b.state);
  }

  set state(value: unknown) {
    if (!Array.isArray(value)) return;
    this.breakers.forEach((b, i) => {
      b.state = value[i];
    });
  }

  success(state: CircuitState): void {
    for (const b of this.breakers) b.success(state);
  }

  failure(state: CircuitState): boolean {
    // Every breaker records the failure: no short-circuit.
    return this.breakers.map((b) => b.failure(state)).some(Boolean);
  }
}

/**
 * cockatiel's `halfOpenAfter` as a backoff whose duration is read when a call arrives at an open
 * breaker: minus infinity once the wait has passed on our clock (the call becomes a trial), plus
 * infinity before (the call is refused). cockatiel asks for the next backoff each time it opens.
 */
class ClockedWait implements IBackoff<IHalfOpenAfterBackoffContext> {
  openedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly waitMs: number,
    private readonly now: () => number,
  ) {}

  next(): IBackoff<IHalfOpenAfterBackoffContext> {
    this.openedAt = this.now();
    return this;
  }

  /** Milliseconds left before trial calls are let through (0 once they are). */
  remainingMs(): number {
    return Math.max(0, this.openedAt + this.waitMs - this.now());
  }

  get duration(): number {
    return this.remainingMs() === 0 ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
}

export interface BreakerOptions {
  /** Names the dependency in errors (`ehr`). */
  dependency: string;
  /** Whether an error is the dependency's fault (a 404 or a rejected write is not). */
  isFailure: (error: unknown) => boolean;
  /** Failures in a row that open the breaker (5). */
  consecutiveFailures?: number;
  /** Calls in the sliding window (20). */
  window?: number;
  /** Share of the window's calls that must be exceeded by failures to open it (0.5). */
  failureRate?: number;
  /** Time from opening to letting trial calls through (60,000 ms). */
  halfOpenAfterMs?: number;
  /** Successful trial calls in a row that close it (3). */
  halfOpenSuccesses?: number;
  /**
   * Only calls marked as probes are trial calls: any other call is refused (`circuit_open`)
   * while the breaker is not CLOSED, half-open included. Default false: the calls that arrive
   * are the trials.
   */
  trialsByProbeOnly?: boolean;
  now?: () => number;
}

export type StateListener = (state: BreakerState, previous: BreakerState) => void;

/** Marks an error thrown after the caller aborted: never the dependency's fault. */
class CallerAborted {
  constructor(readonly error: unknown) {}
}

export class CircuitBreaker {
  private readonly policy: CircuitBreakerPolicy;
  private readonly wait: ClockedWait;
  private readonly listeners = new Set<StateListener>();
  private reported: BreakerState = 'CLOSED';

  constructor(private readonly options: BreakerOptions) {
    const now = options.now ?? Date.now;
    this.wait = new ClockedWait(options.halfOpenAfterMs ?? 60_000, now);
    const isFailure = options.isFailure;
    this.policy = circuitBreaker(
      handleWhen((e) => !(e instanceof CallerAborted) && isFailure(e)),
      {
        breaker: new AnyOfBreaker([
          new ConsecutiveBreaker(options.consecutiveFailures ?? 5),
          new CountBreaker({ threshold: options.failureRate ?? 0.5, size: options.window ?? 20 }),
        ]),
        halfOpenAfter: this.wait,
        halfOpenSampling: { calls: options.halfOpenSuccesses ?? 3, threshold: 0 },
      },
    );
    this.policy.onStateChange(() => {
      this.sync();
    });
  }

  /**
   * The state now. An open breaker whose wait has passed reads HALF_OPEN: the next call is a trial
   * (cockatiel makes the switch when that call arrives).
   */
  state(): BreakerState {
    this.sync();
    return this.reported;
  }

  gaugeValue(): GaugeValue {
    return GAUGE_VALUE[this.state()];
  }

  /** Called on every change of `state()`; returns a function that removes the listener. */
  onStateChange(listener: StateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Milliseconds before an open breaker lets a trial call through (0 once it does). */
  remainingMs(): number {
    return this.policy.state === CircuitState.Closed ? 0 : this.wait.remainingMs();
  }

  /**
   * Runs `fn` through the breaker: refused with a `circuit_open` ResilienceError while open
   * (and, with `trialsByProbeOnly`, while not closed unless `probe`). Errors after `signal`
   * aborted never count against the dependency.
   */
  async execute<T>(
    fn: (signal: AbortSignal) => Promise<T>,
    signal?: AbortSignal,
    probe = false,
  ): Promise<T> {
    if (
      this.options.trialsByProbeOnly === true &&
      !probe &&
      this.policy.state !== CircuitState.Closed
    ) {
      this.sync();
      throw new ResilienceError(this.options.dependency, 'circuit_open', {
        retryAfterMs: this.wait.remainingMs(),
      });
    }
    try {
      return await this.policy.execute(async (ctx) => {
        try {
          return await fn(ctx.signal);
        } catch (error) {
          throw signal?.aborted === true ? new CallerAborted(error) : error;
        }
      }, signal);
    } catch (error) {
      if (error instanceof CallerAborted) throw error.error;
      if (error instanceof BrokenCircuitError) {
        throw new ResilienceError(this.options.dependency, 'circuit_open', {
          retryAfterMs: this.wait.remainingMs(),
        });
      }
      throw error;
    } finally {
      this.sync();
    }
  }

  private current(): BreakerState {
    switch (this.policy.state) {
      case CircuitState.Closed:
        return 'CLOSED';
      case CircuitState.HalfOpen:
        return 'HALF_OPEN';
      default:
        return this.policy.state === CircuitState.Open && this.wait.remainingMs() === 0
          ? 'HALF_OPEN'
          : 'OPEN';
    }
  }

  private sync(): void {
    const next = this.current();
    if (next === this.reported) return;
    const previous = this.reported;
    this.reported = next;
    for (const listener of this.listeners) listener(next, previous);
  }
}
