import { availableParallelism } from 'node:os';
import { Type, type Static } from 'typebox';
import type { EmbeddingsConfig } from './providers/embeddings/index.js';

/**
 * The knowledge base's settings: file store, embeddings, vector store and indexing jobs. Declared
 * here to keep config.ts readable; config.ts still reads the environment and validates them with
 * everything else, so one message names every bad key.
 */

const Url = (protocols: string) => Type.String({ pattern: `^(${protocols})://`, maxLength: 2048 });
const Secret = Type.String({ minLength: 1, maxLength: 1024 });

export const KnowledgeEnv = {
  NEXTCLOUD_URL: Type.Optional(Url('https?')),
  // No colon: HTTP Basic authentication could not tell where the user name ends.
  NEXTCLOUD_USER: Type.Optional(Type.String({ pattern: '^[^:]{1,256}$' })),
  NEXTCLOUD_PASSWORD: Type.Optional(Secret),
  // Every segment starts with a letter, digit or `_`, so `.` and `..` cannot climb out.
  NEXTCLOUD_ROOT: Type.String({
    pattern: '^(/[A-Za-z0-9_][A-Za-z0-9._ -]{0,254})*/?$',
    maxLength: 1024,
    default: '/medical-assistant',
  }),
  EMBEDDINGS_PROVIDER: Type.Union([Type.Literal('hashed'), Type.Literal('openai')], {
    default: 'hashed',
  }),
  EMBEDDINGS_DIMENSIONS: Type.Optional(Type.Integer({ minimum: 16, maximum: 8192 })),
  EMBEDDINGS_MODEL: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  EMBEDDINGS_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 2048, default: 64 }),
  EMBEDDINGS_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 300_000, default: 30_000 }),
  OPENAI_BASE_URL: Type.Optional(Url('https?')),
  OPENAI_API_KEY: Type.Optional(Secret),
  QDRANT_URL: Type.Optional(Url('https?')),
  QDRANT_API_KEY: Type.Optional(Secret),
  QDRANT_COLLECTION_PREFIX: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', default: 'mas_' }),
  QDRANT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 300_000, default: 10_000 }),
  // Where a search ranks: `embedded` (BM25 in this process, vectors in the vector store) or
  // `qdrant` (both in Qdrant, fused there; needs QDRANT_URL).
  KB_SEARCH_ENGINE: Type.Union([Type.Literal('embedded'), Type.Literal('qdrant')], {
    default: 'embedded',
  }),
  VECTOR_INDEX_MAX_STALENESS_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
  // Rows from which the embedded dense copy ranks through an approximate graph (HNSW).
  VECTOR_INDEX_APPROXIMATE_FROM: Type.Integer({ minimum: 1, maximum: 1e9, default: 50_000 }),
  KB_WORKER_ENABLED: Type.Boolean({ default: true }),
  KB_JOB_MAX_RETRIES: Type.Integer({ minimum: 0, maximum: 20, default: 3 }),
  KB_JOB_RETRY_BASE_MS: Type.Integer({ minimum: 10, maximum: 3_600_000, default: 5000 }),
  KB_JOB_LEASE_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 60_000 }),
  KB_JOB_SWEEP_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  // Worker threads for extraction, chunking and offline embedding; unset: from the CPU count.
  KB_WORKER_THREADS: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
  KB_WORKER_MAX_HEAP_MB: Type.Integer({ minimum: 64, maximum: 16_384, default: 1024 }),
  // Extraction budgets (DECISIONS 6); each failing a job with EXTRACTION_LIMIT.
  KB_MAX_DECODED_MB: Type.Integer({ minimum: 1, maximum: 4096, default: 200 }),
  KB_MAX_PAGES: Type.Integer({ minimum: 1, maximum: 100_000, default: 5000 }),
  KB_MAX_CHUNKS: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 20_000 }),
  KB_MAX_CPU_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 300 }),
};

type KnowledgeEnvValues = Static<ReturnType<typeof Type.Object<typeof KnowledgeEnv>>>;

export interface KnowledgeConfig {
  /** WebDAV (Nextcloud) file store; unset: the local directory `DATA_DIR/files`. */
  nextcloud: { url: string; user: string; password: string; root: string } | undefined;
  embeddings: EmbeddingsConfig;
  /** Qdrant; unset: the embedded vector index in the database. */
  qdrant:
    | { url: string; apiKey: string | undefined; collectionPrefix: string; timeoutMs: number }
    | undefined;
  /**
   * `embedded`: BM25 in each instance's lexical index, fused with the vector store's dense ranking
   * here; `qdrant`: both rankings in Qdrant (sparse BM25 and dense vectors), fused there.
   */
  searchEngine: 'embedded' | 'qdrant';
  vectorIndexMaxStalenessMs: number;
  /** Rows from which the embedded dense copy ranks through an approximate graph (HNSW). */
  vectorIndexApproximateFrom: number;
  jobs: {
    /** Run indexing jobs in this instance (an API-only instance can leave them to others). */
    workerEnabled: boolean;
    maxRetries: number;
    retryBaseMs: number;
    leaseMs: number;
    sweepMs: number;
    /** Worker threads, which is also how many jobs an instance runs at once. */
    threads: number;
    /** Heap limit of each worker thread. */
    maxHeapMb: number;
  };
  budgets: ExtractionBudgets;
}

/** What one indexing job may cost; exceeding any fails it with EXTRACTION_LIMIT. */
export interface ExtractionBudgets {
  /** Decoded (decompressed) PDF stream data, summed over the document's streams. */
  maxDecodedBytes: number;
  maxPages: number;
  maxChunks: number;
  /** Time a worker thread spends working on the job (waits for the database excluded). */
  maxCpuMs: number;
}

/** The budgets' defaults (the environment's defaults above), for code wired without config. */
export const DEFAULT_BUDGETS: Readonly<ExtractionBudgets> = {
  maxDecodedBytes: 200 * 1024 * 1024,
  maxPages: 5000,
  maxChunks: 20_000,
  maxCpuMs: 300_000,
};

/** One thread per core up to 4, at least one: the HTTP thread and PostgreSQL need CPU too. */
export const defaultWorkerThreads = (): number => Math.max(1, Math.min(4, availableParallelism()));

/** Cross-key rules; problems go into the one list config.ts reports. */
export function checkKnowledge(env: KnowledgeEnvValues, problems: Map<string, string>): void {
  checkNextcloud(env, problems);
  for (const key of ['NEXTCLOUD_URL', 'OPENAI_BASE_URL', 'QDRANT_URL'] as const) {
    const value = env[key];
    if (value === undefined || problems.has(key)) continue;
    const url = URL.parse(value);
    if (url === null) problems.set(key, 'is not a valid URL');
    else if (url.username !== '' || url.password !== '') {
      problems.set(key, 'must not contain credentials');
    }
  }
  if (env.KB_SEARCH_ENGINE === 'qdrant' && env.QDRANT_URL === undefined) {
    problems.set('QDRANT_URL', 'required when KB_SEARCH_ENGINE=qdrant');
  }
  if (env.EMBEDDINGS_PROVIDER === 'openai') {
    for (const key of ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'EMBEDDINGS_MODEL'] as const) {
      if (env[key] === undefined && !problems.has(key)) {
        problems.set(key, 'required when EMBEDDINGS_PROVIDER=openai');
      }
    }
  }
}

/** Credentials go with the URL, never in it (a URL ends up in messages and logs). */
function checkNextcloud(env: KnowledgeEnvValues, problems: Map<string, string>): void {
  if (env.NEXTCLOUD_URL === undefined) {
    if (env.NEXTCLOUD_USER !== undefined || env.NEXTCLOUD_PASSWORD !== undefined) {
      problems.set('NEXTCLOUD_URL', 'required when NEXTCLOUD_USER or NEXTCLOUD_PASSWORD is set');
    }
    return;
  }
  for (const key of ['NEXTCLOUD_USER', 'NEXTCLOUD_PASSWORD'] as const) {
    if (env[key] === undefined && !problems.has(key)) {
      problems.set(key, 'required when NEXTCLOUD_URL is set');
    }
  }
}

export function knowledgeConfig(env: KnowledgeEnvValues): KnowledgeConfig {
  const { NEXTCLOUD_URL: url, NEXTCLOUD_USER: user, NEXTCLOUD_PASSWORD: password } = env;
  return {
    nextcloud:
      url !== undefined && user !== undefined && password !== undefined
        ? { url, user, password, root: env.NEXTCLOUD_ROOT }
        : undefined,
    embeddings: embeddingsConfig(env),
    qdrant:
      env.QDRANT_URL === undefined
        ? undefined
        : {
            url: env.QDRANT_URL,
            apiKey: env.QDRANT_API_KEY,
            collectionPrefix: env.QDRANT_COLLECTION_PREFIX,
            timeoutMs: env.QDRANT_TIMEOUT_MS,
          },
    searchEngine: env.KB_SEARCH_ENGINE,
    vectorIndexMaxStalenessMs: env.VECTOR_INDEX_MAX_STALENESS_MS,
    vectorIndexApproximateFrom: env.VECTOR_INDEX_APPROXIMATE_FROM,
    jobs: {
      workerEnabled: env.KB_WORKER_ENABLED,
      maxRetries: env.KB_JOB_MAX_RETRIES,
      retryBaseMs: env.KB_JOB_RETRY_BASE_MS,
      leaseMs: env.KB_JOB_LEASE_MS,
      sweepMs: env.KB_JOB_SWEEP_MS,
      threads: env.KB_WORKER_THREADS ?? defaultWorkerThreads(),
      maxHeapMb: env.KB_WORKER_MAX_HEAP_MB,
    },
    budgets: {
      maxDecodedBytes: env.KB_MAX_DECODED_MB * 1024 * 1024,
      maxPages: env.KB_MAX_PAGES,
      maxChunks: env.KB_MAX_CHUNKS,
      maxCpuMs: env.KB_MAX_CPU_SECONDS * 1000,
    },
  };
}

function embeddingsConfig(env: KnowledgeEnvValues): EmbeddingsConfig {
  const dimensions =
    env.EMBEDDINGS_DIMENSIONS === undefined ? {} : { dimensions: env.EMBEDDINGS_DIMENSIONS };
  if (env.EMBEDDINGS_PROVIDER === 'hashed') return { provider: 'hashed', ...dimensions };
  return {
    provider: 'openai',
    baseUrl: env.OPENAI_BASE_URL ?? '',
    apiKey: env.OPENAI_API_KEY ?? '',
    model: env.EMBEDDINGS_MODEL ?? '',
    batchSize: env.EMBEDDINGS_BATCH_SIZE,
    timeoutMs: env.EMBEDDINGS_TIMEOUT_MS,
    ...dimensions,
  };
}
