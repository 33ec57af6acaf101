import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDeps, type Deps } from '../../src/deps.js';
import type { RegisteredRoute } from '../../src/platform/http/route-policy.js';
import type { App } from '../../src/platform/http/types.js';
import { createLogger } from '../../src/platform/logger.js';
import type { DestinationStream } from 'pino';
import type { LlmProvider } from '../../src/providers/llm/types.js';
import { createTestDatabase, openTestDatabase, type Backend } from './db.js';
import { REDIS_URL } from './env.js';
import { deleteRedisPrefix as deleteKeysUnder } from './local-servers.js';

export interface TestApp {
  app: App;
  deps: Deps;
  routes: RegisteredRoute[];
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** `postgres` (default): a database of its own plus Redis. `pglite`: the embedded defaults. */
  backend?: Backend;
  /** Extra environment, as the service would read it. */
  env?: Record<string, string>;
  now?: () => Date;
  /**
   * Share a database URL, Redis prefix and (when given) DATA_DIR, the local file store, with another
   * instance: two instances of one deployment share a file store (docs/operations.md).
   */
  shared?: { databaseUrl: string; redisPrefix: string; dataDir?: string };
  /** Run hooks before `ready()`, e.g. to add a test route. */
  beforeReady?: (app: App) => void;
  /** A language model other than the configured one. */
  llm?: LlmProvider;
  /** Where log lines go (set LOG_LEVEL in `env` too: tests log nothing by default). */
  logDestination?: DestinationStream;
}

/** The signing key of every test app (tests that sign a token themselves use it). */
export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

/** Generous limits so tests are not throttled; rate-limit tests set their own. */
const TEST_LIMITS = {
  RATE_LIMIT_REGISTER_PER_HOUR: '100000',
  RATE_LIMIT_LOGIN_PER_MINUTE: '100000',
  RATE_LIMIT_REFRESH_PER_MINUTE: '100000',
  RATE_LIMIT_HEALTH_PER_MINUTE: '100000',
  RATE_LIMIT_READY_PER_MINUTE: '100000',
};

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const backend = options.backend ?? 'postgres';
  const cleanups: (() => Promise<void>)[] = [];
  let dataDir = options.shared?.dataDir;
  if (dataDir === undefined) {
    const created = await mkdtemp(path.join(tmpdir(), 'mas-test-'));
    dataDir = created;
    cleanups.push(() => rm(created, { recursive: true, force: true }));
  }
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    JWT_SECRET: TEST_JWT_SECRET,
    ...TEST_LIMITS,
  };
  let database;
  if (backend === 'postgres') {
    const redisPrefix = options.shared?.redisPrefix ?? `test:${randomBytes(6).toString('hex')}:`;
    let databaseUrl = options.shared?.databaseUrl;
    if (databaseUrl === undefined) {
      const created = await createTestDatabase();
      databaseUrl = created.url;
      cleanups.push(() => created.drop());
      cleanups.push(() => deleteRedisPrefix(redisPrefix));
    }
    Object.assign(env, { DATABASE_URL: databaseUrl, REDIS_URL, REDIS_PREFIX: redisPrefix });
  } else {
    const opened = await openTestDatabase('pglite');
    database = opened.database;
  }
  const config = loadConfig({ ...env, ...options.env });
  const deps = await createDeps(config, createLogger(config, options.logDestination), {
    ...(database === undefined ? {} : { database }),
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.llm === undefined ? {} : { llm: options.llm }),
  });
  const { app, routes } = await buildApp(deps);
  options.beforeReady?.(app);
  await app.ready();
  return {
    app,
    deps,
    routes,
    close: async () => {
      await app.close();
      await deps.close();
      for (const cleanup of cleanups.reverse()) await cleanup();
    },
  };
}

/** Another instance on `first`'s database and Redis prefix (two instances, one Redis). */
export function createSecondInstance(
  first: TestApp,
  options: Omit<TestAppOptions, 'shared' | 'backend'> = {},
): Promise<TestApp> {
  return createTestApp({
    ...options,
    shared: {
      databaseUrl: first.deps.config.databaseUrl ?? '',
      redisPrefix: first.deps.config.redisPrefix,
      dataDir: first.deps.config.dataDir,
    },
  });
}

/** Removes only the keys under one test's prefix; never flushes the database. */
export async function deleteRedisPrefix(prefix: string): Promise<void> {
  await deleteKeysUnder(REDIS_URL, prefix);
}
