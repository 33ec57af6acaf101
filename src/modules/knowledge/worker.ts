import type { Db } from '../../db/client.js';
import type { JobQueue } from '../../platform/jobs.js';
import type { Logger } from '../../platform/logger.js';
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
  ) {}

  start(): void {
    this.queue.start((jobId) => this.handle(jobId));
    this.sweeper = setInterval(() => void this.sweep(), this.sweepMs);
    this.sweeper.unref();
    void this.sweep();
  }

  /**
   * Best effort: the job is already in the table, so if the queue cannot take it now (Redis
   * away), the next sweep of any worker will.
   */
  async enqueue(jobId: string): Promise<void> {
    await this.queue.enqueue(jobId).catch((err: unknown) => {
      this.log.warn({ err, jobId }, 'could not enqueue an indexing job; the sweep will');
    });
  }

  /** Enqueues every job that is due now. */
  async sweep(): Promise<void> {
    if (this.stopped) return;
    try {
      for (const { id } of await jobsRepo.due(this.db, 100)) await this.enqueue(id);
    } catch (err) {
      this.log.warn({ err }, 'indexing job sweep failed');
    }
  }

  private async handle(jobId: string): Promise<void> {
    const outcome = await this.indexer.run(jobId);
    if (outcome.kind === 'retry' && !this.stopped) {
      await this.queue.enqueue(jobId, outcome.delayMs);
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
