import type { Db } from '../../db/client.js';
import type { KbJobRow } from '../../db/schema/index.js';
import type { JobQueue, QueueEntry } from '../../platform/jobs.js';
import type { Logger } from '../../platform/logger.js';
import type { OutageNotice } from '../../platform/outages.js';
import type { Indexer } from './indexer.js';
import { jobsRepo } from './jobs-repo.js';

/**
 * Feeds indexing jobs to the indexer: from the queue as they are created, and from a periodic
 * sweep of the jobs table, which finds what a queue lost, retries that are due, and jobs whose
 * runner died (their lease lapsed), so a restart resumes every unfinished job.
 */
export class IndexingWorker {
  private sweeper: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly queue: JobQueue,
    private readonly indexer: Indexer,
    private readonly log: Logger,
    private readonly sweepMs: number,
    /** Told of a failure first: a lost database or Redis is logged there once, not per sweep. */
    private readonly outages?: OutageNotice,
  ) {}

  start(): void {
    this.queue.start((jobId) => this.handle(jobId));
    this.sweeper = setInterval(() => void this.sweep(), this.sweepMs);
    this.sweeper.unref();
    void this.sweep();
  }

  /** A new job (pending, due at `runAfter`). */
  async enqueue(job: Pick<KbJobRow, 'id' | 'runAfter'>): Promise<void> {
    await this.add({ jobId: job.id, dueAt: job.runAfter });
  }

  /**
   * Enqueues every job that is due now, a job whose runner died included: it is due once its
   * lease lapses, and is then run again within this sweep's interval.
   */
  async sweep(): Promise<void> {
    if (this.stopped) return;
    try {
      for (const { id, dueAt } of await jobsRepo.due(this.db, 100)) {
        await this.add({ jobId: id, dueAt });
      }
    } catch (err) {
      if (this.outages?.noticed(err) !== true) this.log.warn({ err }, 'indexing job sweep failed');
    }
  }

  /**
   * Best effort: the job is already in the table, so if the queue cannot take it now (Redis
   * away), the next sweep of any worker will.
   */
  private async add(entry: QueueEntry): Promise<void> {
    await this.queue.enqueue(entry).catch((err: unknown) => {
      if (this.outages?.noticed(err) === true) return;
      this.log.warn(
        { err, jobId: entry.jobId },
        'could not enqueue an indexing job; the sweep will',
      );
    });
  }

  private async handle(jobId: string): Promise<void> {
    const outcome = await this.indexer.run(jobId);
    if (outcome.kind === 'retry' && !this.stopped) {
      const { runAfter } = outcome;
      await this.add({ jobId, dueAt: runAfter, delayMs: runAfter.getTime() - Date.now() });
    }
  }

  /**
   * Stops sweeping, stops the running jobs (each is released for the next runner: pending again,
   * no retry spent), and closes the queue once they have let go.
   */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.indexer.stop();
    await this.queue.close();
  }
}
