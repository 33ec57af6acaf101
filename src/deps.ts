import path from 'node:path';
import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/client.js';
import { runMigrations } from './db/migrate.js';
import { AuditService } from './modules/audit/service.js';
import { RevocationList } from './modules/auth/revocation.js';
import { LoginLockout } from './modules/auth/lockout.js';
import { PasswordChangeLockout } from './modules/auth/password-lockout.js';
import { AuthService } from './modules/auth/service.js';
import { Sessions } from './modules/auth/sessions.js';
import { TokenSigner, loadOrCreateSecret } from './modules/auth/tokens.js';
import { HealthService, type ReadinessCheck } from './modules/health/service.js';
import { createChat, type Chat } from './modules/chat/wiring.js';
import { createVoice, type Voice } from './modules/voice/wiring.js';
import { MessageService } from './modules/conversations/messages.js';
import { ConversationsService } from './modules/conversations/service.js';
import { FeedbackService } from './modules/feedback/service.js';
import { createKnowledge, type Knowledge } from './modules/knowledge/wiring.js';
import { UsersService } from './modules/users/service.js';
import { createFileStore, type FileStore } from './platform/file-store.js';
import type { LlmProvider } from './providers/llm/types.js';
import type { VectorStore } from './providers/vectorstore/types.js';
import { memoryAttempts, redisAttempts } from './platform/attempts.js';
import {
  createRedis,
  memoryStore,
  redisConnected,
  redisStore,
  type KeyValueStore,
} from './platform/kv.js';
import type { Logger } from './platform/logger.js';
import { createMetrics, type Metrics } from './platform/metrics.js';
import { serviceVersion } from './platform/project.js';
import { RateLimiter } from './platform/rate-limit.js';

export interface Deps {
  config: Config;
  log: Logger;
  database: Database;
  redis: Redis | undefined;
  kv: KeyValueStore;
  files: FileStore;
  metrics: Metrics;
  audit: AuditService;
  users: UsersService;
  auth: AuthService;
  conversations: ConversationsService;
  messages: MessageService;
  feedback: FeedbackService;
  knowledge: Knowledge;
  chat: Chat;
  voice: Voice;
  rateLimiter: RateLimiter;
  health: HealthService;
  close(): Promise<void>;
}

export interface DepsOverrides {
  /** An already open database (tests use in-memory PGlite or a per-file PostgreSQL database). */
  database?: Database;
  now?: () => Date;
  /** Another language model than the configured one (tests). */
  llm?: LlmProvider;
}

/** Builds everything once, in dependency order. Services receive exactly what they use. */
export async function createDeps(
  config: Config,
  log: Logger,
  overrides: DepsOverrides = {},
): Promise<Deps> {
  const now = overrides.now ?? (() => new Date());
  const database =
    overrides.database ??
    (await openDatabase({
      url: config.databaseUrl,
      pgliteDir: path.join(config.dataDir, 'pglite'),
      poolSize: config.databasePoolSize,
    }));
  await runMigrations(database);
  const redis =
    config.redisUrl === undefined ? undefined : createRedis(config.redisUrl, config.redisPrefix);
  if (redis !== undefined && !(await redisConnected(redis, 5000))) {
    log.warn('Redis is not reachable at start-up; /ready reports it until it is');
  }
  const kv = redis === undefined ? memoryStore() : redisStore(redis);
  const files = createFileStore(config);
  const metrics = createMetrics();

  const secret = await loadOrCreateSecret(config.jwtSecret, config.dataDir);
  const signer = new TokenSigner(secret, config.accessTokenTtl, config.refreshTokenTtl, () =>
    now().getTime(),
  );
  const revocations = new RevocationList(kv, config.refreshTokenTtl);
  // The in-process store starts empty: without this, a restart would revive logged-out tokens.
  if (kv.kind === 'memory') await revocations.restoreFromDatabase(database.db, now());
  const audit = new AuditService(database.db, now);
  // Password checks are counted where every instance sees them (DECISIONS 8).
  const attempts = redis === undefined ? memoryAttempts() : redisAttempts(redis);
  const users = new UsersService(
    database.db,
    audit,
    new Sessions(revocations),
    new PasswordChangeLockout(database.db, audit, metrics, config.lockout, attempts, now),
    config.userCacheTtlMs,
  );
  const lockout = new LoginLockout(database.db, audit, metrics, config.lockout, attempts, now);
  const auth = new AuthService(
    database.db,
    signer,
    revocations,
    users,
    lockout,
    audit,
    metrics,
    now,
  );
  const conversations = new ConversationsService(database.db, audit);
  const messages = new MessageService(database.db);
  const feedback = new FeedbackService(database.db, now);
  metrics.countCache('l1', signer.cacheCounts);
  metrics.countCache('l1', users.cacheCounts);
  const knowledge = await createKnowledge(config, database, files, audit, log, metrics.kbJobs);
  const rateLimiter = new RateLimiter(kv, log, () => now().getTime());
  const chat = createChat({
    config,
    log,
    metrics,
    redis,
    auth,
    messages,
    conversations,
    search: knowledge.search,
    rateLimiter,
    ...(overrides.llm === undefined ? {} : { llm: overrides.llm }),
  });
  const voice = createVoice({
    config,
    log,
    metrics,
    kv,
    db: database.db,
    auth,
    chat: chat.service,
    messages,
    conversations,
  });
  const health = new HealthService(
    serviceVersion(),
    readinessChecks(database, kv, files, knowledge.vectors),
    config.readyCheckTimeoutMs,
  );

  return {
    config,
    log,
    database,
    redis,
    kv,
    files,
    metrics,
    audit,
    users,
    auth,
    conversations,
    messages,
    feedback,
    knowledge,
    chat,
    voice,
    rateLimiter,
    health,
    async close() {
      // Answers and jobs first: both still need the database to record where they stopped.
      await voice.close().catch(() => undefined);
      await chat.close(config.shutdownTimeoutMs / 2).catch(() => undefined);
      await knowledge.close().catch(() => undefined);
      await Promise.allSettled([kv.close(), database.close()]);
    },
  };
}

/** The four roles of DECISIONS 8, each probing the backend that serves it. */
function readinessChecks(
  database: Database,
  kv: KeyValueStore,
  files: FileStore,
  vectors: VectorStore,
): ReadinessCheck[] {
  const dbBackend = database.kind === 'postgres' ? 'postgresql' : 'pglite';
  return [
    { role: 'postgres', backend: dbBackend, probe: () => database.ping() },
    {
      role: 'redis',
      backend: kv.kind === 'redis' ? 'redis' : 'in-process',
      probe: () => kv.ping(),
    },
    {
      role: 'qdrant',
      backend: vectors.kind === 'qdrant' ? 'qdrant' : `embedded (${dbBackend})`,
      probe: () => vectors.probe(),
    },
    { role: 'nextcloud', backend: files.kind, probe: () => files.probe() },
  ];
}
