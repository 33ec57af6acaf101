/**
 * One request's abort controller for the OpenAI-compatible adapters: aborted by the caller's signal
 * or by the stall timer, which a stream arms while it waits for data and pauses while the caller
 * holds what it was given.
 */
export class Watchdog {
  readonly #controller = new AbortController();
  readonly #caller: AbortSignal;
  readonly #ms: number;
  readonly #onCallerAbort = (): void => {
    this.#controller.abort(this.#caller.reason);
  };
  #timer: NodeJS.Timeout | undefined;
  fired = false;

  constructor(ms: number, caller: AbortSignal) {
    this.#ms = ms;
    this.#caller = caller;
    caller.addEventListener('abort', this.#onCallerAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get callerAborted(): boolean {
    return this.#caller.aborted;
  }

  abortReason(): unknown {
    return this.#caller.reason ?? new DOMException('The operation was aborted', 'AbortError');
  }

  arm(): void {
    this.pause();
    this.#timer = setTimeout(() => {
      this.fired = true;
      this.#controller.abort(new DOMException('stalled', 'TimeoutError'));
    }, this.#ms);
  }

  pause(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** After a quiet end of the SDK's iteration: a timeout or the caller's abort, if either. */
  throwIfFired(): void {
    if (this.fired || this.#caller.aborted) throw new DOMException('aborted', 'AbortError');
  }

  /** Stops the timer and aborts the request if it is still open (the caller stopped early). */
  dispose(): void {
    this.pause();
    this.#caller.removeEventListener('abort', this.#onCallerAbort);
    if (!this.#controller.signal.aborted) this.#controller.abort();
  }
}
