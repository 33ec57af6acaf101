import path from 'node:path';
import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/client.js';
import { runMigrations } from './db/migrate.js';
import { TableMaintenance } from './db/table-maintenance.js';
import { SocketRegistry } from './modules/admin/socket-registry.js';
import { StatusService } from './modules/admin/status-service.js';
import { SystemMetrics } from './modules/admin/system-metrics.js';
import { CacheAdminService } from './modules/admin/cache-service.js';
import { CheckpointSigner } from './modules/audit/checkpoint.js';
import { startAuditRetention } from './modules/audit/purge-scheduler.js';
import { AuditRetention } from './modules/audit/retention.js';
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
import type { EhrService } from './modules/ehr/service.js';
import { createEhr } from './modules/ehr/wiring.js';
import { MessageService } from './modules/conversations/messages.js';
import { ConversationsService } from './modules/conversations/service.js';
import { FeedbackService } from './modules/feedback/service.js';
import { flagCacheRegion } from './modules/flags/cache.js';
import { FlagsService } from './modules/flags/service.js';
import { createKnowledge, type Knowledge } from './modules/knowledge/wiring.js';
import { UsersService } from './modules/users/service.js';
import { userCacheRegion } from './modules/users/cache.js';
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
import { Chaos } from './platform/chaos.js';
import { LayeredCache } from './platform/layered-cache.js';
import { createMetrics, type Metrics } from './platform/metrics.js';
import { Outages } from './platform/outages.js';
import { memoryPubSub, redisPubSub, type PubSub } from './platform/pubsub.js';
import { serviceVersion } from './platform/project.js';
import { RateLimiter } from './platform/rate-limit.js';

export interface Deps {
  config: Config;
  log: Logger;
  database: Database;
  redis: Redis | undefined;
  kv: KeyValueStore;
  /** Messages between the instances (in-process without Redis). */
  pubsub: PubSub;
  /** The two-layer cache (DECISIONS 7). */
  cache: LayeredCache;
  cacheAdmin: CacheAdminService;
  files: FileStore;
  metrics: Metrics;
  /** Lost dependencies: the 503 of a request that needed one, logged once per outage. */
  outages: Outages;
  audit: AuditService;
  /** The audit retention purge (also run on a schedule unless AUDIT_RETENTION_ENABLED=false). */
  auditRetention: AuditRetention;
  users: UsersService;
  auth: AuthService;
  conversations: ConversationsService;
  messages: MessageService;
  feedback: FeedbackService;
  /** Feature flags and their evaluation (DECISIONS 7). */
  flags: FlagsService;
  knowledge: Knowledge;
  chat: Chat;
  voice: Voice;
  /** The electronic health record (issue 13); status `disabled` without FHIR_BASE_URL. */
  ehr: EhrService;
  /** Fault injection into ehr, llm, stt and tts (CHAOS_ENABLED; this instance only). */
  chaos: Chaos;
  rateLimiter: RateLimiter;
  health: HealthService;
  /** The admin panel's live views: sockets on every instance, this instance's figures. */
  status: StatusService;
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
      connectTimeoutMs: config.databaseConnectTimeoutMs,
    }));
  await runMigrations(database);
  // PGlite has no autovacuum: without this its tables are never analysed nor vacuumed.
  const maintenance =
    database.kind === 'pglite' ? new TableMaintenance(database.db, log) : undefined;
  maintenance?.start();
  const redis =
    config.redisUrl === undefined ? undefined : createRedis(config.redisUrl, config.redisPrefix);
  if (redis !== undefined && !(await redisConnected(redis, 5000))) {
    log.warn('Redis is not reachable at start-up; /ready reports it until it is');
  }
  const kv = redis === undefined ? memoryStore() : redisStore(redis);
  const files = createFileStore(config);
  const metrics = createMetrics();
  const outages = new Outages(
    log,
    {
      ...(database.kind === 'postgres' ? { postgres: () => database.ping() } : {}),
      ...(redis === undefined ? {} : { redis: () => kv.ping() }),
    },
    metrics,
  );
  // A new connection is the first sign that a lost dependency is back (its probe is the next).
  database.onConnect(() => {
    outages.restored('postgres');
  });
  redis?.on('ready', () => {
    outages.restored('redis');
  });
  const pubsub =
    redis === undefined ? memoryPubSub() : redisPubSub(redis, config.redisPrefix, log, outages);
  const cache = new LayeredCache(pubsub, redis, config.redisPrefix, log, outages);
  await cache.start();
  metrics.countCache('l1', cache.l1Counts);
  metrics.countCache('l2', cache.l2CacheCounts);

  const secret = await loadOrCreateSecret(config.jwtSecret, config.dataDir);
  const signer = new TokenSigner(secret, config.accessTokenTtl, config.refreshTokenTtl, () =>
    now().getTime(),
  );
  const revocations = new RevocationList(kv, config.refreshTokenTtl);
  // The in-process store starts empty: without this, a restart would revive logged-out tokens.
  if (kv.kind === 'memory') await revocations.restoreFromDatabase(database.db, now());
  const auditKeys = new CheckpointSigner(config.auditRetention.checkpointKey ?? secret);
  const audit = new AuditService(database.db, now, auditKeys);
  const retention = new AuditRetention(database.db, audit, auditKeys, config.auditRetention, now);
  const purges = startAuditRetention(retention, config.auditRetention, log);
  // Password checks are counted where every instance sees them (DECISIONS 8).
  const attempts = redis === undefined ? memoryAttempts() : redisAttempts(redis);
  const users = new UsersService(
    database.db,
    audit,
    new Sessions(revocations),
    new PasswordChangeLockout(database.db, audit, metrics, config.lockout, attempts, now),
    cache.region('user', userCacheRegion(config.userCacheTtlMs)),
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
  const feedback = new FeedbackService(database.db, audit, now);
  const flags = new FlagsService(
    database.db,
    audit,
    cache.region('flags', flagCacheRegion(config.flagCacheTtlMs)),
    now,
  );
  metrics.countCache('l1', signer.cacheCounts);
  const knowledge = await createKnowledge(
    config,
    database,
    files,
    audit,
    log,
    metrics.kbJobs,
    cache,
    outages,
  );
  const rateLimiter = new RateLimiter(kv, log, () => now().getTime(), outages);
  const sockets = new SocketRegistry(redis, log, config.wsRegistry);
  await sockets.start();
  const system = new SystemMetrics(metrics, database);
  await system.start();
  const chaos = new Chaos({ enabled: config.chaos.enabled, log });
  const ehr = createEhr({ config, log, kv, metrics, flags, audit, chaos });
  const chat = createChat({
    config,
    log,
    metrics,
    redis,
    kv,
    auth,
    messages,
    search: knowledge.search,
    glossary: knowledge.glossary,
    rateLimiter,
    pubsub,
    sockets,
    ehr,
    chaos,
    outages,
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
    sockets,
    chaos,
    outages,
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
    pubsub,
    cache,
    cacheAdmin: new CacheAdminService(cache, audit),
    files,
    metrics,
    outages,
    audit,
    auditRetention: retention,
    users,
    auth,
    conversations,
    messages,
    feedback,
    flags,
    knowledge,
    chat,
    voice,
    ehr,
    chaos,
    rateLimiter,
    health,
    status: new StatusService(database.db, sockets, system, now),
    async close() {
      await purges.close();
      // Answers and jobs first: both still need the database to record where they stopped.
      await voice.close().catch(() => undefined);
      // Degradation events still being audited need the database.
      await ehr.close().catch(() => undefined);
      await chat.close(config.shutdownTimeoutMs / 2).catch(() => undefined);
      await knowledge.close().catch(() => undefined);
      system.close();
      await sockets.close();
      cache.close();
      await pubsub.close();
      outages.close();
      await maintenance?.close();
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
      // `qdrant`, or `qdrant-hybrid` when both rankings run there (KB_SEARCH_ENGINE=qdrant).
      backend: vectors.kind === 'embedded' ? `embedded (${dbBackend})` : vectors.kind,
      probe: () => vectors.probe(),
    },
    { role: 'nextcloud', backend: files.kind, probe: () => files.probe() },
  ];
}
