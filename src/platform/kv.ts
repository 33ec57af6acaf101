import { Redis } from 'ioredis';

/**
 * The small shared state the service keeps outside the database: fixed-window counters (rate
 * limits), expiring flags (token revocation) and expiring values (voice sessions). Redis when configured, so every instance sees the
 * same state; otherwise an in-process map with the same behaviour.
 */
export interface KeyValueStore {
  readonly kind: 'redis' | 'memory';
  /**
   * Adds `by` (default 1) to the counter at `key`, created with a lifetime of `ttlMs`; returns the
   * new count.
   */
  increment(key: string, ttlMs: number, by?: number): Promise<number>;
  /** Sets an expiring marker. */
  setFlag(key: string, ttlSeconds: number): Promise<void>;
  /** True when any of the keys is set and unexpired. */
  anyFlag(keys: readonly string[]): Promise<boolean>;
  /** Stores an expiring value (replacing any). */
  put(key: string, value: string, ttlMs: number): Promise<void>;
  /** The unexpired value at `key`. */
  get(key: string): Promise<string | undefined>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The counter is new when it equals what was just added: only then does it get its lifetime. */
const INCREMENT_LUA = `
local by = tonumber(ARGV[2])
local n = redis.call('INCRBY', KEYS[1], by)
if n == by then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

interface RedisWithIncrement extends Redis {
  incrementWindow(key: string, ttlMs: number, by: number): Promise<number>;
}

export function createRedis(url: string, prefix: string): Redis {
  const redis = new Redis(url, {
    keyPrefix: prefix,
    // Fail fast while Redis is unreachable instead of queueing requests behind it.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    enableAutoPipelining: true,
    retryStrategy: (times) => Math.min(100 * times, 2000),
  });
  // Connection errors are reported by /ready; without a listener ioredis would print each one.
  redis.on('error', () => undefined);
  return redis;
}

/**
 * Resolves true once the client is connected, false when its first attempt fails or `timeoutMs`
 * passes. Start-up waits for this: with the offline queue off, commands sent before the connection
 * is up fail at once (rate limits would fail open, token checks would fail).
 */
export function redisConnected(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      resolve(ok);
    };
    const onReady = () => {
      done(true);
    };
    const onError = () => {
      done(false);
    };
    const timer = setTimeout(onError, timeoutMs);
    redis.once('ready', onReady);
    redis.once('error', onError);
  });
}

export function redisStore(redis: Redis): KeyValueStore {
  const client = redis as RedisWithIncrement;
  client.defineCommand('incrementWindow', { numberOfKeys: 1, lua: INCREMENT_LUA });
  return {
    kind: 'redis',
    increment: (key, ttlMs, by = 1) => client.incrementWindow(key, ttlMs, by),
    setFlag: async (key, ttlSeconds) => {
      await client.set(key, '1', 'EX', Math.max(1, Math.ceil(ttlSeconds)));
    },
    anyFlag: async (keys) => keys.length > 0 && (await client.exists(...keys)) > 0,
    put: async (key, value, ttlMs) => {
      await client.set(key, value, 'PX', Math.max(1, Math.ceil(ttlMs)));
    },
    get: async (key) => (await client.get(key)) ?? undefined,
    ping: async () => {
      await client.ping();
    },
    close: async () => {
      await client.quit().catch(() => {
        client.disconnect();
      });
    },
  };
}

/** In-process store for a single instance; expired entries are swept once a minute. */
export function memoryStore(now: () => number = Date.now): KeyValueStore {
  const counters = new Map<string, { count: number; expiresAt: number }>();
  const values = new Map<string, { value: string; expiresAt: number }>();
  const live = (key: string) => {
    const entry = values.get(key);
    return entry !== undefined && entry.expiresAt > now() ? entry.value : undefined;
  };
  const sweep = setInterval(() => {
    const t = now();
    for (const [k, v] of counters) if (v.expiresAt <= t) counters.delete(k);
    for (const [k, v] of values) if (v.expiresAt <= t) values.delete(k);
  }, 60_000);
  sweep.unref();
  return {
    kind: 'memory',
    increment: (key, ttlMs, by = 1) => {
      const t = now();
      const entry = counters.get(key);
      if (entry === undefined || entry.expiresAt <= t) {
        counters.set(key, { count: by, expiresAt: t + ttlMs });
        return Promise.resolve(by);
      }
      entry.count += by;
      return Promise.resolve(entry.count);
    },
    setFlag: (key, ttlSeconds) => {
      values.set(key, { value: '1', expiresAt: now() + ttlSeconds * 1000 });
      return Promise.resolve();
    },
    anyFlag: (keys) => Promise.resolve(keys.some((k) => live(k) !== undefined)),
    put: (key, value, ttlMs) => {
      values.set(key, { value, expiresAt: now() + ttlMs });
      return Promise.resolve();
    },
    get: (key) => Promise.resolve(live(key)),
    ping: () => Promise.resolve(),
    close: () => {
      clearInterval(sweep);
      return Promise.resolve();
    },
  };
}
