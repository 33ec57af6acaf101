import { Glossary } from './glossary.js';
import type { Counter } from 'prom-client';
import type { Config } from '../../config.js';
import type { Database, Db } from '../../db/client.js';
import type { FileStore } from '../../platform/file-store.js';
import type { LayeredCache } from '../../platform/layered-cache.js';
import { LexicalIndex } from './lexical/index.js';
import { bullQueue, inProcessQueue } from '../../platform/jobs.js';
import type { Logger } from '../../platform/logger.js';
import type { OutageNotice } from '../../platform/outages.js';
import { createEmbeddings } from '../../providers/embeddings/index.js';
import type { EmbeddingsProvider } from '../../providers/embeddings/types.js';
import { createVectorStore, type VectorStore } from '../../providers/vectorstore/index.js';
import { QdrantHybridStore } from '../../providers/vectorstore/qdrant-hybrid.js';
import type { AuditService } from '../audit/service.js';
import { ExtractionPool } from './extraction-pool.js';
import { Indexer } from './indexer.js';
import { jobStateCounter, type JobStateCounter } from './job-states.js';
import { jobsRepo } from './jobs-repo.js';
import { KB_SEARCH_PATTERN, PASSAGES_TIMEOUT_MS, SearchService, kbSearchRegion } from './search.js';
import { KnowledgeService } from './service.js';
import { IndexingWorker } from './worker.js';

export interface Knowledge {
  knowledge: KnowledgeService;
  search: SearchService;
  vectors: VectorStore;
  worker: IndexingWorker;
  /** What the worker runs each job with. */
  indexer: Indexer;
  /**
   * BM25 over the live chunks, in a thread of its own; built on the first search or `warm`. Not
   * used by searches with KB_SEARCH_ENGINE=qdrant (Qdrant ranks by terms), only by `lexical()`.
   */
  lexical: LexicalIndex;
  /** The abbreviations and names the live documents define, for the chat turns' model. */
  glossary: Glossary;
  close(): Promise<void>;
}

/** Chunks embedded, stored and counted as progress per step. */
const BATCH_SIZE = 32;
/** How often a running job checks that it is still wanted (not deleted, not superseded). */
const WATCH_MS = 1000;

/**
 * Connections for the passages read, besides the main pool: half as many, at least two. A read
 * holds one for about a millisecond; more would only add to what PostgreSQL must allow.
 */
export function searchConnections(poolSize: number): number {
  return Math.max(2, Math.ceil(poolSize / 2));
}

/**
 * The knowledge base's parts, chosen by configuration: BullMQ when Redis is configured, else the
 * in-process runner; Qdrant when QDRANT_URL is set, else the embedded index; with
 * KB_SEARCH_ENGINE=qdrant, Qdrant ranks by terms too and the lexical index is never built.
 */
export async function createKnowledge(
  config: Config,
  database: Database,
  files: FileStore,
  audit: AuditService,
  log: Logger,
  kbJobs: Counter<'state'>,
  cache: LayeredCache,
  outages: OutageNotice,
): Promise<Knowledge> {
  const db = database.db;
  const embeddings = createEmbeddings(config.embeddings);
  const vectors = vectorStoreFor(config, db, log);
  const states = jobStateCounter(kbJobs);
  const lexical = new LexicalIndex(db, { log });
  const glossary = new Glossary(db);
  const invalidate = searchInvalidator(cache, log);
  const corpusChanged = () => {
    lexical.changed();
    return invalidate();
  };
  const parts = { db, files, embeddings, vectors, log, states, corpusChanged, outages };
  const indexing = createIndexing(config, parts);
  // Search needs the store ready for this model even before this process indexes anything.
  await vectors.ensureReady(embeddings.dimensions, embeddings.model).catch((err: unknown) => {
    log.warn({ err }, 'vector store not ready at start-up; /ready reports it');
  });
  // One process owns an embedded database: a job it shows as running died with the last process.
  if (database.kind === 'pglite') await jobsRepo.expireLeases(db);
  if (config.jobs.workerEnabled) indexing.worker.start();
  const { maxRetries } = config.jobs;
  const { worker } = indexing;
  return {
    knowledge: new KnowledgeService(
      db,
      files,
      vectors,
      audit,
      worker,
      log,
      maxRetries,
      states,
      corpusChanged,
    ),
    search: new SearchService(
      db,
      embeddings,
      vectors,
      lexical,
      // PGlite ignores statement_timeout (checked with pg_sleep): no transaction to set it.
      database.kind === 'pglite' ? { passagesTimeoutMs: null } : {},
      cache.region('kb-search', kbSearchRegion),
      // On PostgreSQL, connections of their own with the read's timeout set: no transaction.
      database.withStatementTimeout?.(
        PASSAGES_TIMEOUT_MS,
        searchConnections(config.databasePoolSize),
      ),
      glossary,
    ),
    vectors,
    worker,
    indexer: indexing.indexer,
    lexical,
    glossary,
    close: async () => {
      await indexing.close();
      await lexical.close();
      await vectors.close();
    },
  };
}

export interface IndexingParts {
  db: Db;
  files: FileStore;
  embeddings: EmbeddingsProvider;
  vectors: VectorStore;
  log: Logger;
  states: JobStateCounter;
  /** Called when the searchable corpus changed (a version went live). */
  corpusChanged?: () => Promise<void>;
  /** Told of failures first: a lost database or Redis is logged there once. */
  outages?: OutageNotice;
}

/**
 * Empties the cached search results everywhere; a failure is logged, not thrown (the change it
 * follows has committed; the results' lifetime bounds the staleness).
 */
export function searchInvalidator(cache: LayeredCache, log: Logger): () => Promise<void> {
  return () =>
    cache.invalidate(KB_SEARCH_PATTERN).then(
      () => undefined,
      (err: unknown) => {
        log.warn({ err }, 'cached search results could not be invalidated');
      },
    );
}

export interface Indexing {
  worker: IndexingWorker;
  indexer: Indexer;
  pool: ExtractionPool;
  /** Stops the worker (running jobs are released) and the extraction threads, within the shutdown deadline. */
  close(): Promise<void>;
}

/**
 * The indexing side, for the API process and the worker process alike: the extraction threads,
 * the indexer, and the queue feeding it (as many jobs at once as there are threads).
 */
export function createIndexing(config: Config, parts: IndexingParts): Indexing {
  const { jobs } = config;
  const pool = new ExtractionPool({ threads: jobs.threads, maxHeapMb: jobs.maxHeapMb });
  const indexer = new Indexer(
    {
      ...parts,
      pool,
      budgets: config.budgets,
      embedInThreads: config.embeddings.provider === 'hashed',
    },
    {
      leaseMs: jobs.leaseMs,
      retryBaseMs: jobs.retryBaseMs,
      batchSize: BATCH_SIZE,
      watchMs: WATCH_MS,
    },
  );
  const queue =
    config.redisUrl === undefined
      ? inProcessQueue(parts.log, jobs.threads)
      : bullQueue(config.redisUrl, config.redisPrefix, parts.log, jobs.threads, parts.outages);
  const worker = new IndexingWorker(
    parts.db,
    queue,
    indexer,
    parts.log,
    jobs.sweepMs,
    parts.outages,
  );
  return {
    worker,
    indexer,
    pool,
    close: async () => {
      // Bounded: a job that cannot be released in time keeps its lease, which then lapses.
      await settledWithin(worker.close(), config.shutdownTimeoutMs);
      await pool.destroy();
    },
  };
}

/** Waits for `work` to settle, at most `ms`. */
async function settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([
    work.then(
      () => undefined,
      () => undefined,
    ),
    timeout,
  ]);
  clearTimeout(timer);
}

/**
 * Qdrant when configured, else the index embedded in the database; Qdrant with the chunks' BM25
 * terms as well when it ranks searches (KB_SEARCH_ENGINE=qdrant, which config requires QDRANT_URL
 * for).
 */
export function vectorStoreFor(config: Config, db: Db, log: Logger): VectorStore {
  if (config.searchEngine === 'qdrant') {
    if (config.qdrant === undefined) throw new Error('KB_SEARCH_ENGINE=qdrant needs QDRANT_URL');
    return new QdrantHybridStore(config.qdrant);
  }
  return config.qdrant === undefined
    ? createVectorStore({
        kind: 'embedded',
        db,
        maxStalenessMs: config.vectorIndexMaxStalenessMs,
        approximateFrom: config.vectorIndexApproximateFrom,
        onThreadEnded: (err) => {
          log.error({ err }, 'dense index thread ended; the next search loads the copy again');
        },
      })
    : createVectorStore({ kind: 'qdrant', ...config.qdrant });
}
