import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from './logger.js';
import type { OutageNotice } from './outages.js';

export type JobHandler = (jobId: string) => Promise<void>;

/**
 * What a queue entry says: look at job `jobId`, which became due at `dueAt` (its `run_after`, or
 * the end of the lease its runner let lapse), after `delayMs`.
 */
export interface QueueEntry {
  jobId: string;
  dueAt: Date;
  delayMs?: number;
}

/**
 * Hands job ids to a worker. The database row is the job; the queue only says "look at this one",
 * so a duplicate or a lost entry is harmless: handlers claim the row, and a periodic sweep
 * re-enqueues what is due.
 */
export interface JobQueue {
  readonly kind: 'bullmq' | 'in-process';
  enqueue(entry: QueueEntry): Promise<void>;
  /** Starts handing jobs to `handler`, up to the queue's concurrency at a time per instance. */
  start(handler: JobHandler): void;
  close(): Promise<void>;
}

/** The embedded runner: a timer per delayed job and up to `concurrency` jobs at a time. */
export function inProcessQueue(log: Logger, concurrency = 1): JobQueue {
  let handler: JobHandler | null = null;
  let closed = false;
  const waiting: string[] = [];
  const queued = new Set<string>();
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Set<Promise<void>>();

  const pump = () => {
    while (!closed && handler !== null && running.size < concurrency && waiting.length > 0) {
      const jobId = waiting.shift() ?? '';
      queued.delete(jobId);
      const done: Promise<void> = handler(jobId)
        .catch((err: unknown) => {
          log.error({ err, jobId }, 'indexing job handler failed');
        })
        .finally(() => {
          running.delete(done);
          pump();
        });
      running.add(done);
    }
  };
  const run = (jobId: string) => {
    if (closed || queued.has(jobId)) return;
    queued.add(jobId);
    waiting.push(jobId);
    pump();
  };

  return {
    kind: 'in-process',
    enqueue: ({ jobId, delayMs = 0 }) => {
      if (delayMs <= 0) {
        run(jobId);
        return Promise.resolve();
      }
      clearTimeout(timers.get(jobId));
      const timer = setTimeout(() => {
        timers.delete(jobId);
        run(jobId);
      }, delayMs);
      timer.unref();
      timers.set(jobId, timer);
      return Promise.resolve();
    },
    start: (h) => {
      handler = h;
      pump();
    },
    close: async () => {
      closed = true;
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      await Promise.all(running);
    },
  };
}

/** BullMQ on Redis: jobs survive a restart of any instance and spread over every worker. */
export function bullQueue(
  redisUrl: string,
  prefix: string,
  log: Logger,
  concurrency = 1,
  /** Told of a connection's error first: a lost Redis is logged there once, not per retry. */
  outages?: OutageNotice,
): JobQueue {
  const failed = (err: Error, message: string) => {
    if (outages?.noticed(err, 'redis') !== true) log.warn({ err }, message);
  };
  const name = 'kb-indexing';
  // Adding fails fast while Redis is away (the sweep re-enqueues from the jobs table later); the
  // worker's blocking connection waits for Redis to come back, as BullMQ requires.
  const queueConnection = new Redis(redisUrl, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  });
  queueConnection.on('error', () => undefined);
  const queue = new Queue(name, { connection: queueConnection, prefix: `${prefix}bull` });
  queue.on('error', (err) => {
    failed(err, 'job queue error');
  });
  let worker: Worker | null = null;
  let workerConnection: Redis | null = null;
  return {
    kind: 'bullmq',
    enqueue: async ({ jobId, dueAt, delayMs = 0 }) => {
      // The entry's id is the job and the moment it became due: the sweeps that find it due again
      // add nothing (BullMQ dedupes by id), while a new due moment gets an entry of its own. A
      // worker killed mid-job leaves its entry `active` until BullMQ's stalled-job check (30 s or
      // more): the job's lapsed lease is a new due moment, so the sweep's entry is not held up by
      // that one (which, run later, finds the job taken and does nothing).
      await queue.add(
        'index',
        { jobId },
        {
          jobId: `${jobId}-${String(dueAt.getTime())}`,
          delay: Math.max(0, delayMs),
          removeOnComplete: true,
          removeOnFail: true,
        },
      );
    },
    start: (handler) => {
      workerConnection = new Redis(redisUrl, { maxRetriesPerRequest: null });
      workerConnection.on('error', () => undefined);
      worker = new Worker<{ jobId: string }>(
        name,
        async (job) => {
          await handler(job.data.jobId);
        },
        { connection: workerConnection, prefix: `${prefix}bull`, concurrency },
      );
      worker.on('error', (err) => {
        failed(err, 'job worker error');
      });
    },
    close: async () => {
      // Bounded: with Redis unreachable, a graceful close would wait for it forever.
      await withTimeout(Promise.allSettled([worker?.close(), queue.close()]), CLOSE_TIMEOUT_MS);
      workerConnection?.disconnect();
      queueConnection.disconnect();
    },
  };
}

const CLOSE_TIMEOUT_MS = 5000;

/** Resolves when `work` settles or after `ms`, whichever comes first. */
async function withTimeout(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([work.then(() => undefined), timeout]);
  clearTimeout(timer);
}
