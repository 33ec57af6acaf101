import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabase } from './db/client.js';
import { runMigrations } from './db/migrate.js';
import { jobStateCounter } from './modules/knowledge/job-states.js';
import { createIndexing, searchInvalidator, vectorStoreFor } from './modules/knowledge/wiring.js';
import { createFileStore } from './platform/file-store.js';
import { createRedis } from './platform/kv.js';
import { LayeredCache } from './platform/layered-cache.js';
import { redisPubSub } from './platform/pubsub.js';
import { createLogger, type Logger } from './platform/logger.js';
import { createMetrics } from './platform/metrics.js';
import { createEmbeddings } from './providers/embeddings/index.js';
import { onTerminationSignals } from './shutdown.js';

/**
 * The indexing worker on its own (`npm run worker`): no HTTP server, only the knowledge base's
 * jobs, taken from BullMQ when REDIS_URL is set and from the jobs table's sweep in any case. Runs
 * from the same build and settings as the API; API instances can then run with
 * KB_WORKER_ENABLED=false, and workers scale on their own. Needs DATABASE_URL: the embedded
 * database can be opened by one process only.
 */
async function main(): Promise<void> {
  const config = configOrExit();
  if (config.databaseUrl === undefined) {
    process.stderr.write(
      'The indexing worker needs DATABASE_URL: the embedded database (PGlite) can be opened by ' +
        'one process only, the API. Without DATABASE_URL, indexing runs in the API process.\n',
    );
    process.exit(1);
  }
  const log = createLogger(config);
  const stop = await startWorker(config, config.databaseUrl, log);
  onTerminationSignals(log, stop);
}

/**
 * With Redis, a version this worker makes live empties the API instances' cached search results
 * (their memory through pub/sub). Without Redis the results' lifetime bounds their staleness.
 */
function searchCacheInvalidation(config: Config, log: Logger) {
  if (config.redisUrl === undefined) return undefined;
  const redis = createRedis(config.redisUrl, config.redisPrefix);
  const pubsub = redisPubSub(redis, config.redisPrefix, log);
  const cache = new LayeredCache(pubsub, redis, config.redisPrefix, log);
  return {
    corpusChanged: searchInvalidator(cache, log),
    close: async () => {
      cache.close();
      await pubsub.close();
      redis.disconnect();
    },
  };
}

/** Starts the worker; returns how to stop it (running jobs are released, then the database closes). */
async function startWorker(config: Config, url: string, log: Logger) {
  const database = await openDatabase({
    url,
    poolSize: config.databasePoolSize,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
  });
  await runMigrations(database);
  const embeddings = createEmbeddings(config.embeddings);
  const vectors = vectorStoreFor(config, database.db, log);
  await vectors.ensureReady(embeddings.dimensions, embeddings.model);
  const invalidation = searchCacheInvalidation(config, log);
  const indexing = createIndexing(config, {
    db: database.db,
    files: createFileStore(config),
    embeddings,
    vectors,
    log,
    states: jobStateCounter(createMetrics().kbJobs),
    ...(invalidation === undefined ? {} : { corpusChanged: invalidation.corpusChanged }),
  });
  indexing.worker.start();
  log.info(
    { threads: config.jobs.threads, queue: config.redisUrl === undefined ? 'sweep' : 'bullmq' },
    'indexing worker started',
  );
  return async (reason: string): Promise<void> => {
    log.info({ reason }, 'shutting down');
    await indexing.close();
    await invalidation?.close();
    await database.close();
    log.info('stopped');
  };
}

function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `start-up failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
