import { Redis } from 'ioredis';

/**
 * The small shared state the service keeps outside the database: fixed-window counters (rate
 * limits), expiring flags (token revocation, chat cancels), expiring values (voice sessions) and
 * leases (answers generating per user, the order of turns on a branch). Redis when configured, so
 * every instance sees the same state; otherwise an in-process map with the same behaviour.
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
  /**
   * A place in the set of leases at `key`, a line ordered by entry (a semaphore when up to
   * `capacity` may go at once, a queue when only the first may). Expired members are dropped
   * first; then `member` is renewed for `ttlMs` when it is in the set, else added at the end (at
   * `order`, when it comes back after losing its place, e.g. to a Redis restart) unless the set
   * already holds `capacity` members. Undefined when refused. All of it is one atomic step.
   */
  lease(
    key: string,
    member: string,
    ttlMs: number,
    options?: LeaseOptions,
  ): Promise<LeasePlace | undefined>;
  /** Leaves the set of leases at `key`. */
  dropLease(key: string, member: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface LeaseOptions {
  /** Refuse to add `member` when the set already holds this many (renewing is never refused). */
  capacity?: number;
  /** Where `member` goes when it is not in the set: the `order` it had (default: the end). */
  order?: number;
}

export interface LeasePlace {
  /** How many members are ahead of this one (0: it is first). */
  rank: number;
  /** Its position in the line (microseconds of the store's clock when it first entered). */
  order: number;
  /** False when it was not in the set (it entered now, or came back after losing its place). */
  renewed: boolean;
}

/**
 * Leases on Redis: a sorted set by order (`key`) and one by expiry (`key:exp`), the store's own
 * clock (TIME) for both so that instances' clocks do not matter. Both keys expire with the
 * newest lease, so an abandoned line leaves nothing behind.
 */
const LEASE_LUA = `
local t = redis.call('TIME')
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now = math.floor(nowUs / 1000)
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for i = 1, #expired, 500 do
  local part = {unpack(expired, i, math.min(i + 499, #expired))}
  redis.call('ZREM', KEYS[1], unpack(part))
  redis.call('ZREM', KEYS[2], unpack(part))
end
local ttl = tonumber(ARGV[2])
local order = redis.call('ZSCORE', KEYS[1], ARGV[1])
local renewed = 1
if order then
  order = tonumber(order)
else
  renewed = 0
  local capacity = tonumber(ARGV[3])
  if capacity >= 0 and redis.call('ZCARD', KEYS[1]) >= capacity then return {-1, 0, 0} end
  if ARGV[4] ~= '' then order = tonumber(ARGV[4]) else order = nowUs end
  redis.call('ZADD', KEYS[1], order, ARGV[1])
end
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return {redis.call('ZRANK', KEYS[1], ARGV[1]), order, renewed}`;

/** The counter is new when it equals what was just added: only then does it get its lifetime. */
const INCREMENT_LUA = `
local by = tonumber(ARGV[2])
local n = redis.call('INCRBY', KEYS[1], by)
if n == by then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

interface RedisWithScripts extends Redis {
  incrementWindow(key: string, ttlMs: number, by: number): Promise<number>;
  leasePlace(
    key: string,
    expiries: string,
    member: string,
    ttlMs: number,
    capacity: number,
    order: string,
  ): Promise<[number, number, number]>;
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
  const client = redis as RedisWithScripts;
  client.defineCommand('incrementWindow', { numberOfKeys: 1, lua: INCREMENT_LUA });
  client.defineCommand('leasePlace', { numberOfKeys: 2, lua: LEASE_LUA });
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
    lease: async (key, member, ttlMs, options = {}) => {
      const [rank, order, renewed] = await client.leasePlace(
        key,
        `${key}:exp`,
        member,
        Math.max(1, Math.ceil(ttlMs)),
        options.capacity ?? -1,
        options.order === undefined ? '' : String(options.order),
      );
      return rank < 0 ? undefined : { rank, order, renewed: renewed === 1 };
    },
    dropLease: async (key, member) => {
      await client.multi().zrem(key, member).zrem(`${key}:exp`, member).exec();
    },
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
  const leases = new Map<string, Map<string, { order: number; expiresAt: number }>>();
  let lastOrder = 0;
  const liveLeases = (key: string) => {
    const set = leases.get(key) ?? new Map<string, { order: number; expiresAt: number }>();
    const t = now();
    for (const [member, lease] of set) if (lease.expiresAt <= t) set.delete(member);
    if (set.size === 0) leases.delete(key);
    return set;
  };
  const live = (key: string) => {
    const entry = values.get(key);
    return entry !== undefined && entry.expiresAt > now() ? entry.value : undefined;
  };
  const sweep = setInterval(() => {
    const t = now();
    for (const [k, v] of counters) if (v.expiresAt <= t) counters.delete(k);
    for (const [k, v] of values) if (v.expiresAt <= t) values.delete(k);
    for (const k of [...leases.keys()]) liveLeases(k);
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
    lease: (key, member, ttlMs, options = {}) => {
      const set = liveLeases(key);
      const held = set.get(member);
      const expiresAt = now() + ttlMs;
      if (held !== undefined) held.expiresAt = expiresAt;
      else if (set.size >= (options.capacity ?? Infinity)) return Promise.resolve(undefined);
      // Microseconds, as on Redis; strictly increasing within the process.
      lastOrder = Math.max(lastOrder + 1, now() * 1000);
      const lease = held ?? { order: options.order ?? lastOrder, expiresAt };
      set.set(member, lease);
      leases.set(key, set);
      const ahead = [...set].filter(
        ([m, l]) => l.order < lease.order || (l.order === lease.order && m < member),
      ).length;
      return Promise.resolve({ rank: ahead, order: lease.order, renewed: held !== undefined });
    },
    dropLease: (key, member) => {
      leases.get(key)?.delete(member);
      return Promise.resolve();
    },
    ping: () => Promise.resolve(),
    close: () => {
      clearInterval(sweep);
      return Promise.resolve();
    },
  };
}
