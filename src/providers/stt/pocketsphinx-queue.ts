/**
 * Callers waiting for a free decoder, first come first served. Each waits at most `timeoutMs`
 * (then `onTimeout()` is its error) and leaves as soon as its signal aborts (with its reason).
 */
export class WaitQueue<T> {
  readonly #waiters: { resolve: (value: T) => void; reject: (error: Error) => void }[] = [];

  get length(): number {
    return this.#waiters.length;
  }

  wait(signal: AbortSignal, timeoutMs: number, onTimeout: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
      };
      const waiter = {
        resolve: (value: T) => {
          leave();
          resolve(value);
        },
        reject: (error: Error) => {
          leave();
          reject(error);
        },
      };
      const onAbort = () => {
        waiter.reject(signal.reason as Error);
      };
      const timer = setTimeout(() => {
        waiter.reject(onTimeout());
      }, timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Hands `value` to the first waiter; false if none waits. */
  serve(value: T): boolean {
    const waiter = this.#waiters[0];
    if (waiter === undefined) return false;
    waiter.resolve(value);
    return true;
  }

  failAll(error: Error): void {
    for (const waiter of [...this.#waiters]) waiter.reject(error);
  }
}
