import type { Db } from '../../db/client.js';
import { jobsRepo } from './jobs-repo.js';

/** Stops a run whose job is no longer its own (superseded, deleted, or taken over). */
export class JobLost extends Error {
  constructor() {
    super('the job is no longer running');
    this.name = 'JobLost';
  }
}

/** Stops a run because its process is shutting down: the job is released, not failed. */
export class ShuttingDown extends Error {
  constructor() {
    super('shutting down');
    this.name = 'ShuttingDown';
  }
}

export interface WatchOptions {
  /** How long a claimed job stays a runner's own without renewal. */
  leaseMs: number;
  /** How often the job's row is checked: the longest a deleted or superseded job keeps running. */
  watchMs: number;
}

/**
 * Watches one running job for its runner: renews the lease, and aborts the run's signal (with
 * JobLost) as soon as the row says the job is no longer running, which is how a deletion or a new
 * version, on whichever instance they happen, stop a job that may be deep inside pdf.js.
 */
export class JobWatch {
  private readonly controller = new AbortController();
  private readonly timers: NodeJS.Timeout[];

  /** `stopping`: the process is shutting down already; the run is aborted from the start. */
  constructor(db: Db, jobId: string, options: WatchOptions, stopping = false) {
    if (stopping) this.abort(new ShuttingDown());
    const lost = (running: boolean) => {
      if (!running) this.abort(new JobLost());
    };
    // A failed check (the database briefly away) proves nothing: the next one decides.
    const every = (ms: number, check: () => Promise<boolean>) => {
      const timer = setInterval(() => {
        void check().then(lost, () => undefined);
      }, ms);
      timer.unref();
      return timer;
    };
    this.timers = [
      every(options.leaseMs / 3, () => jobsRepo.renew(db, jobId, options.leaseMs)),
      every(options.watchMs, () => jobsRepo.isRunning(db, jobId)),
    ];
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The first reason wins. */
  abort(reason: Error): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  stop(): void {
    this.timers.forEach(clearInterval);
  }
}
