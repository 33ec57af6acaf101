import { Ajv } from 'ajv';
import { Type, type Static } from 'typebox';
import {
  checkKnowledge,
  KnowledgeEnv,
  knowledgeConfig,
  type KnowledgeConfig,
} from './config-knowledge.js';
import { chatConfig, ChatEnv, type ChatSettings } from './config-chat.js';
import { AuditEnv, auditConfig, type AuditRetentionSettings } from './config-audit.js';
import { checkEhr, EhrEnv, ehrConfig, type EhrSettings } from './config-ehr.js';
import { OpsEnv, opsConfig, type OpsSettings } from './config-ops.js';
import { checkLlm, LlmEnv, llmConfig, type LlmSettings } from './config-llm.js';
import { checkVoice, VoiceEnv, voiceConfig, type VoiceSettingsConfig } from './config-voice.js';

/**
 * The only reader of process.env. Every setting is declared once here, with its type, default and
 * bounds; a bad value stops start-up with one message naming every bad key.
 */

const Port = Type.Integer({ minimum: 0, maximum: 65535 });
/** A browser origin: scheme, host (a name or a bracketed IPv6 address) and optional port. */
const ORIGIN = 'https?://([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?';
const Url = (protocols: string) => Type.String({ pattern: `^(${protocols})://`, maxLength: 2048 });

const EnvSchema = Type.Object({
  NODE_ENV: Type.Union(
    [Type.Literal('development'), Type.Literal('production'), Type.Literal('test')],
    { default: 'development' },
  ),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  PORT: Type.Integer({ ...Port, default: 8000 }),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  DATABASE_URL: Type.Optional(Url('postgres|postgresql')),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  DATABASE_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
  REDIS_URL: Type.Optional(Url('redis|rediss')),
  REDIS_PREFIX: Type.String({ pattern: '^[A-Za-z0-9:_.-]{1,64}$', default: 'mas:' }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32, maxLength: 1024 })),
  ACCESS_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 86_400, default: 900 }),
  REFRESH_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 3600, maximum: 7_776_000, default: 604_800 }),
  BOOTSTRAP_ADMIN_EMAIL: Type.Optional(Type.String({ minLength: 3, maxLength: 254 })),
  BOOTSTRAP_ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 8, maxLength: 128 })),
  LOG_LEVEL: Type.Union(
    [
      Type.Literal('fatal'),
      Type.Literal('error'),
      Type.Literal('warn'),
      Type.Literal('info'),
      Type.Literal('debug'),
      Type.Literal('trace'),
      Type.Literal('silent'),
    ],
    { default: 'info' },
  ),
  TRUST_PROXY: Type.Union(
    [
      Type.Boolean(),
      Type.Integer({ minimum: 0, maximum: 32 }),
      Type.String({ pattern: '^[0-9a-fA-F.:/]+(,[0-9a-fA-F.:/]+)*$', maxLength: 1024 }),
    ],
    { default: false },
  ),
  // Origins browsers may call the API from (`https://app.example.com,http://localhost:5173`), or
  // `*` for any; unset: none, so only same-origin pages can read answers.
  CORS_ORIGINS: Type.Optional(
    Type.String({
      pattern: `^(\\*|${ORIGIN}(,${ORIGIN})*)$`,
      maxLength: 4096,
      description: 'comma-separated origins like https://app.example.com (no path), or *',
    }),
  ),
  RATE_LIMIT_ENABLED: Type.Boolean({ default: true }),
  RATE_LIMIT_REGISTER_PER_HOUR: Type.Integer({ minimum: 1, default: 5 }),
  RATE_LIMIT_LOGIN_PER_MINUTE: Type.Integer({ minimum: 1, default: 10 }),
  RATE_LIMIT_REFRESH_PER_MINUTE: Type.Integer({ minimum: 1, default: 30 }),
  RATE_LIMIT_HEALTH_PER_MINUTE: Type.Integer({ minimum: 1, default: 100 }),
  RATE_LIMIT_READY_PER_MINUTE: Type.Integer({ minimum: 1, default: 100 }),
  LOGIN_MAX_FAILURES: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
  LOGIN_FAILURE_WINDOW_SECONDS: Type.Integer({ minimum: 1, default: 900 }),
  LOGIN_LOCK_SECONDS: Type.Integer({ minimum: 1, default: 900 }),
  USER_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 1000, default: 500 }),
  // How long an instance keeps the feature flags in memory: the bound on staleness when it misses
  // an invalidation (Redis unreachable). Above 1000 a change reaches it within a second only
  // through pub/sub.
  FLAG_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 1000 }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 120_000, default: 10_000 }),
  READY_CHECK_TIMEOUT_MS: Type.Integer({ minimum: 50, maximum: 30_000, default: 2000 }),
  // The shared socket registry (GET /api/admin/panel/websocket-status): how long an instance's
  // entry outlives its last refresh, and how often a live instance refreshes it.
  WS_REGISTRY_TTL_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 30_000 }),
  WS_REGISTRY_REFRESH_MS: Type.Integer({ minimum: 100, maximum: 300_000, default: 10_000 }),
  // Fault injection for the EHR, LLM, STT and TTS (src/platform/chaos.ts); never in production.
  CHAOS_ENABLED: Type.Boolean({ default: false }),
  ...KnowledgeEnv,
  ...LlmEnv,
  ...ChatEnv,
  ...VoiceEnv,
  ...EhrEnv,
  ...AuditEnv,
  ...OpsEnv,
});

type Env = Static<typeof EnvSchema>;

export interface Config
  extends
    KnowledgeConfig,
    LlmSettings,
    ChatSettings,
    VoiceSettingsConfig,
    EhrSettings,
    AuditRetentionSettings,
    OpsSettings {
  env: Env['NODE_ENV'];
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /** How long a query waits for a PostgreSQL connection before the request answers 503. */
  databaseConnectTimeoutMs: number;
  redisUrl: string | undefined;
  redisPrefix: string;
  jwtSecret: string | undefined;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  bootstrapAdmin: { email: string; password: string } | undefined;
  logLevel: Env['LOG_LEVEL'];
  /** Fastify's trustProxy: trust all (true), a hop count, or a comma-separated list of proxies. */
  trustProxy: boolean | number | string;
  /** Origins allowed to make cross-origin requests; `['*']` for any; empty: same-origin only. */
  corsOrigins: string[];
  rateLimit: {
    enabled: boolean;
    registerPerHour: number;
    loginPerMinute: number;
    refreshPerMinute: number;
    healthPerMinute: number;
    readyPerMinute: number;
  };
  lockout: { maxFailures: number; windowSeconds: number; lockSeconds: number };
  userCacheTtlMs: number;
  flagCacheTtlMs: number;
  shutdownTimeoutMs: number;
  readyCheckTimeoutMs: number;
  wsRegistry: { ttlMs: number; refreshMs: number };
  /** Whether the operator may inject faults into the dependencies (this instance only). */
  chaos: { enabled: boolean };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

// No type coercion: parseScalar converts text strictly, so `0x50` is not a port.
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
const validateEnv = ajv.compile<Env>(EnvSchema);
const KEYS = Object.keys(EnvSchema.properties);

/** Parses an environment (process.env by default) into a Config, or throws ConfigError. */
export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of KEYS) {
    const value = source[key];
    if (value !== undefined && value !== '') raw[key] = parseScalar(schemaOf(key), value);
  }
  const problems = new Map<string, string>();
  if (!validateEnv(raw)) {
    for (const err of validateEnv.errors ?? []) {
      const key = err.instancePath.split('/')[1] ?? String(err.params.missingProperty ?? '?');
      if (!problems.has(key)) problems.set(key, describe(schemaOf(key), err.message));
    }
  }
  const env = raw as Env;
  if (env.NODE_ENV === 'production' && env.JWT_SECRET === undefined) {
    problems.set('JWT_SECRET', 'required when NODE_ENV=production (at least 32 characters)');
  }
  if ((env.BOOTSTRAP_ADMIN_EMAIL === undefined) !== (env.BOOTSTRAP_ADMIN_PASSWORD === undefined)) {
    problems.set('BOOTSTRAP_ADMIN_EMAIL/BOOTSTRAP_ADMIN_PASSWORD', 'set both or neither');
  }
  const registryKeysValid =
    !problems.has('WS_REGISTRY_TTL_MS') && !problems.has('WS_REGISTRY_REFRESH_MS');
  if (registryKeysValid && env.WS_REGISTRY_REFRESH_MS * 2 > env.WS_REGISTRY_TTL_MS) {
    problems.set('WS_REGISTRY_REFRESH_MS', 'must be at most half of WS_REGISTRY_TTL_MS');
  }
  checkKnowledge(env, problems);
  checkLlm(env, problems);
  checkVoice(env, problems);
  checkEhr(env, problems);
  if (problems.size > 0) {
    throw new ConfigError([...problems].map(([key, message]) => `${key}: ${message}`));
  }
  return toConfig(env);
}

interface ScalarSchema {
  type?: string;
  /** Said instead of the validator's message (which would quote a raw pattern). */
  description?: string;
  const?: unknown;
  anyOf?: ScalarSchema[];
}

const schemaOf = (key: string): ScalarSchema =>
  (EnvSchema.properties as Record<string, ScalarSchema | undefined>)[key] ?? {};

/**
 * Environment values are text. Booleans accept true/false/1/0/yes/no/on/off; integers only plain
 * decimal digits (no `0x50`, ` 80` or `1e3`); everything else is left for the schema to judge.
 */
function parseScalar(schema: ScalarSchema, value: string): unknown {
  const types = new Set([schema.type, ...(schema.anyOf ?? []).map((s) => s.type)]);
  const v = value.toLowerCase();
  // Where a key takes both (TRUST_PROXY), digits are a number: `1` is one hop, not `true`.
  if (types.has('integer') && /^-?\d{1,15}$/.test(value)) return Number(value);
  if (types.has('boolean') && ['true', '1', 'yes', 'on'].includes(v)) return true;
  if (types.has('boolean') && ['false', '0', 'no', 'off'].includes(v)) return false;
  return value;
}

/** An enumeration lists its values; a described key says what it takes; else the validator's message. */
function describe(schema: ScalarSchema, message: string | undefined): string {
  if (schema.description !== undefined) return `must be ${schema.description}`;
  const values = schema.anyOf?.map((s) => s.const) ?? [];
  if (values.length > 0 && values.every((c) => typeof c === 'string')) {
    return `must be one of ${values.join(', ')}`;
  }
  return message ?? 'is invalid';
}

function toConfig(env: Env): Config {
  return {
    env: env.NODE_ENV,
    host: env.HOST,
    port: env.PORT,
    dataDir: env.DATA_DIR,
    databaseUrl: env.DATABASE_URL,
    databasePoolSize: env.DATABASE_POOL_SIZE,
    databaseConnectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
    redisUrl: env.REDIS_URL,
    redisPrefix: env.REDIS_PREFIX,
    jwtSecret: env.JWT_SECRET,
    accessTokenTtl: env.ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtl: env.REFRESH_TOKEN_TTL_SECONDS,
    bootstrapAdmin:
      env.BOOTSTRAP_ADMIN_EMAIL !== undefined && env.BOOTSTRAP_ADMIN_PASSWORD !== undefined
        ? { email: env.BOOTSTRAP_ADMIN_EMAIL, password: env.BOOTSTRAP_ADMIN_PASSWORD }
        : undefined,
    logLevel: env.LOG_LEVEL,
    trustProxy: env.TRUST_PROXY,
    corsOrigins: env.CORS_ORIGINS?.toLowerCase().split(',') ?? [],
    rateLimit: {
      enabled: env.RATE_LIMIT_ENABLED,
      registerPerHour: env.RATE_LIMIT_REGISTER_PER_HOUR,
      loginPerMinute: env.RATE_LIMIT_LOGIN_PER_MINUTE,
      refreshPerMinute: env.RATE_LIMIT_REFRESH_PER_MINUTE,
      healthPerMinute: env.RATE_LIMIT_HEALTH_PER_MINUTE,
      readyPerMinute: env.RATE_LIMIT_READY_PER_MINUTE,
    },
    lockout: {
      maxFailures: env.LOGIN_MAX_FAILURES,
      windowSeconds: env.LOGIN_FAILURE_WINDOW_SECONDS,
      lockSeconds: env.LOGIN_LOCK_SECONDS,
    },
    userCacheTtlMs: env.USER_CACHE_TTL_MS,
    flagCacheTtlMs: env.FLAG_CACHE_TTL_MS,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    readyCheckTimeoutMs: env.READY_CHECK_TIMEOUT_MS,
    wsRegistry: { ttlMs: env.WS_REGISTRY_TTL_MS, refreshMs: env.WS_REGISTRY_REFRESH_MS },
    chaos: { enabled: env.CHAOS_ENABLED },
    ...knowledgeConfig(env),
    ...llmConfig(env),
    ...chatConfig(env),
    ...voiceConfig(env),
    ...ehrConfig(env),
    ...auditConfig(env),
    ...opsConfig(env),
  };
}
