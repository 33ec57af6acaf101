/**
 * The CPU-time budget of a job (DECISIONS 6: 5 minutes a job), as the time its extraction thread
 * spends working: a stopwatch that runs only while nothing holds it (the thread is queued, the
 * original is still being read from the file store, a batch is being written to the database) and
 * calls `onExpired` once the budget is used up. Node 20 cannot read one thread's CPU time, so this
 * is wall-clock time while working, which is never less than the CPU time it spent.
 */

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

export class BusyClock {
  private usedMs = 0;
  private since: number | null = null;
  private timer: unknown = null;
  private stopped = false;

  /** Starts held `holds` times: it runs once each of them is released. */
  constructor(
    private readonly budgetMs: number,
    private readonly onExpired: () => void,
    private holds: number,
    private readonly clock: Clock = realClock,
  ) {
    if (holds === 0) this.run();
  }

  hold(): void {
    if (this.holds++ === 0) this.pause();
  }

  release(): void {
    if (this.holds > 0 && --this.holds === 0) this.run();
  }

  /** Working time so far. */
  get used(): number {
    return this.usedMs + (this.since === null ? 0 : this.clock.now() - this.since);
  }

  /** For good: no callback after this. */
  stop(): void {
    this.pause();
    this.stopped = true;
  }

  private run(): void {
    if (this.stopped) return;
    this.since = this.clock.now();
    this.timer = this.clock.setTimeout(
      () => {
        this.pause();
        this.stopped = true;
        this.onExpired();
      },
      Math.max(0, this.budgetMs - this.usedMs),
    );
  }

  private pause(): void {
    if (this.since !== null) this.usedMs += this.clock.now() - this.since;
    this.since = null;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}
