import { ProviderError, type LlmEvent, type LlmProvider, type LlmRequest } from './types.js';

/**
 * The one place language-model requests are retried (ARCHITECTURE "Streaming and cancellation").
 * A retryable ProviderError is retried only while the failed attempt had yielded nothing: once an
 * event went out (text may already be on the client's screen) the error propagates as it is.
 * Waits grow exponentially with jitter, are at least what the backend asked for (`retryAfterMs`),
 * and end early when the signal aborts. Anything that is not a retryable ProviderError (an abort,
 * a bug) propagates at once.
 */

export interface RetryOptions {
  signal: AbortSignal;
  /** Attempts in all, the first included (1: no retry). */
  attempts: number;
  /** Wait before the first retry; doubled for each further one, then jittered. */
  backoffMs: number;
  /** Called before each wait; `attempt` is the 1-based number of the attempt that failed. */
  onRetry?: (err: ProviderError, attempt: number) => void;
  /** Longest wait; a backend asking for longer (retry-after) is not retried. Default 30 s. */
  maxDelayMs?: number;
  /** For tests: a number in [0, 1). */
  random?: () => number;
}

export async function* streamWithRetry(
  provider: LlmProvider,
  request: LlmRequest,
  options: RetryOptions,
): AsyncIterable<LlmEvent> {
  const { signal } = options;
  for (let attempt = 1; ; attempt += 1) {
    signal.throwIfAborted();
    let yielded = false;
    try {
      for await (const event of provider.stream(request, { signal })) {
        yielded = true;
        yield event;
      }
      return;
    } catch (error) {
      const delay = yielded ? undefined : retryDelay(error, attempt, options);
      if (delay === undefined) throw error;
      options.onRetry?.(error as ProviderError, attempt);
      await sleep(delay, signal);
    }
  }
}

/** How long to wait before the next attempt, or undefined when there is none. */
export function retryDelay(
  error: unknown,
  attempt: number,
  options: RetryOptions,
): number | undefined {
  if (!(error instanceof ProviderError) || !error.retryable) return undefined;
  if (attempt >= options.attempts || options.signal.aborted) return undefined;
  const maxDelay = options.maxDelayMs ?? 30_000;
  const asked = error.retryAfterMs ?? 0;
  if (asked > maxDelay) return undefined;
  const exponential = Math.min(maxDelay, options.backoffMs * 2 ** (attempt - 1));
  // "Equal jitter": half fixed, half random, so retries from many turns spread out.
  const jittered = exponential / 2 + (exponential / 2) * (options.random ?? Math.random)();
  return Math.round(Math.min(maxDelay, Math.max(asked, jittered)));
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The caller's reason as it is (an AbortError unless the caller chose another), like the providers. */
function abortReason(signal: AbortSignal): Error {
  return (signal.reason ?? new DOMException('The operation was aborted', 'AbortError')) as Error;
}
