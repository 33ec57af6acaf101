import type { Counter } from 'prom-client';
import type { Config } from '../../config.js';
import type { Database, Db } from '../../db/client.js';
import type { FileStore } from '../../platform/file-store.js';
import { bullQueue, inProcessQueue } from '../../platform/jobs.js';
import type { Logger } from '../../platform/logger.js';
import { createEmbeddings } from '../../providers/embeddings/index.js';
import { createVectorStore, type VectorStore } from '../../providers/vectorstore/index.js';
import type { AuditService } from '../audit/service.js';
import { Indexer } from './indexer.js';
import { jobStateCounter } from './job-states.js';
import { jobsRepo } from './jobs-repo.js';
import { SearchService } from './search.js';
import { KnowledgeService } from './service.js';
import { IndexingWorker } from './worker.js';

export interface Knowledge {
  knowledge: KnowledgeService;
  search: SearchService;
  vectors: VectorStore;
  worker: IndexingWorker;
  close(): Promise<void>;
}

/** Chunks embedded, stored and counted as progress per step. */
const BATCH_SIZE = 32;

/**
 * The knowledge base's parts, chosen by configuration: BullMQ when Redis is configured, else the
 * in-process runner; Qdrant when QDRANT_URL is set, else the embedded index.
 */
export async function createKnowledge(
  config: Config,
  database: Database,
  files: FileStore,
  audit: AuditService,
  log: Logger,
  kbJobs: Counter<'state'>,
): Promise<Knowledge> {
  const db = database.db;
  const embeddings = createEmbeddings(config.embeddings);
  const vectors = vectorStoreFor(config, db);
  const { jobs } = config;
  const states = jobStateCounter(kbJobs);
  const options = { leaseMs: jobs.leaseMs, retryBaseMs: jobs.retryBaseMs, batchSize: BATCH_SIZE };
  const indexer = new Indexer(db, files, embeddings, vectors, log, options, states);
  const queue =
    config.redisUrl === undefined
      ? inProcessQueue(log)
      : bullQueue(config.redisUrl, config.redisPrefix, log);
  const worker = new IndexingWorker(db, queue, indexer, log, jobs.sweepMs);
  // Search needs the store ready for this model even before this process indexes anything.
  await vectors.ensureReady(embeddings.dimensions, embeddings.model).catch((err: unknown) => {
    log.warn({ err }, 'vector store not ready at start-up; /ready reports it');
  });
  // One process owns an embedded database: a job it shows as running died with the last process.
  if (database.kind === 'pglite') await jobsRepo.expireLeases(db);
  if (jobs.workerEnabled) worker.start();
  const { maxRetries } = jobs;
  return {
    knowledge: new KnowledgeService(db, files, vectors, audit, worker, log, maxRetries, states),
    search: new SearchService(db, embeddings, vectors),
    vectors,
    worker,
    close: () => worker.close(),
  };
}

/** Qdrant when configured, else the index embedded in the database. */
function vectorStoreFor(config: Config, db: Db): VectorStore {
  return config.qdrant === undefined
    ? createVectorStore({ kind: 'embedded', db, maxStalenessMs: config.vectorIndexMaxStalenessMs })
    : createVectorStore({ kind: 'qdrant', ...config.qdrant });
}
