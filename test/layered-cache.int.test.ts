import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisCacheLayer } from '../src/platform/cache-redis.js';
import { escapeGlob, globToRegExp } from '../src/platform/glob.js';
import { createRedis, redisConnected } from '../src/platform/kv.js';
import { LayeredCache, type CacheRegion } from '../src/platform/layered-cache.js';
import { createLogger } from '../src/platform/logger.js';
import { redisPubSub, type PubSub } from '../src/platform/pubsub.js';
import { REDIS_URL } from './helpers/env.js';
import { deleteRedisPrefix } from './helpers/local-servers.js';

/**
 * The two-layer cache on the local Redis, as two instances of the service use it: each its own
 * Redis connections, pub/sub subscriber and memory, one key prefix.
 */

const log = createLogger({ logLevel: 'silent' });

interface Instance {
  redis: Redis;
  pubsub: PubSub;
  cache: LayeredCache;
  close(): Promise<void>;
}

async function instance(prefix: string): Promise<Instance> {
  const redis = createRedis(REDIS_URL, prefix);
  expect(await redisConnected(redis, 5000)).toBe(true);
  const pubsub = redisPubSub(redis, prefix, log);
  const cache = new LayeredCache(pubsub, redis, prefix, log);
  await cache.start();
  return {
    redis,
    pubsub,
    cache,
    close: async () => {
      cache.close();
      await pubsub.close();
      redis.disconnect();
    },
  };
}

/** A loader over a mutable source that counts its calls. */
function source<V>(initial: V) {
  const s = { value: initial, loads: 0, load: () => Promise.resolve(s.value) };
  s.load = () => {
    s.loads += 1;
    return Promise.resolve(s.value);
  };
  return s;
}

async function until(check: () => Promise<boolean>, what: string, limitMs = 5000) {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const regionOptions = { l1TtlMs: 60_000, l2TtlMs: 60_000 };

/** A client without a prefix, connected (commands are not queued while connecting). */
async function rawRedis(): Promise<Redis> {
  const raw = createRedis(REDIS_URL, '');
  expect(await redisConnected(raw, 5000)).toBe(true);
  return raw;
}

describe('LayeredCache on Redis, two instances', () => {
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  const opened: Instance[] = [];
  let one: Instance;
  let two: Instance;
  let regionName = 0;
  /** The same region on both instances (a fresh name per test keeps tests apart). */
  const region = <V>(): [CacheRegion<V>, CacheRegion<V>] => {
    regionName += 1;
    const name = `r${String(regionName)}`;
    return [one.cache.region<V>(name, regionOptions), two.cache.region<V>(name, regionOptions)];
  };

  beforeAll(async () => {
    one = await instance(prefix);
    two = await instance(prefix);
    opened.push(one, two);
  });
  afterAll(async () => {
    for (const i of opened) await i.close();
    await deleteRedisPrefix(REDIS_URL, prefix);
  });

  it('selects in memory exactly the keys Redis’s SCAN MATCH selects', async () => {
    const keys = [
      'user:1',
      'user:12',
      'user:a',
      'users:1',
      'flags:all',
      'kb-search:ab',
      'kb-search:',
      'a*b',
      'a.b',
      'x[y]',
      'q?',
      'weird\\key',
    ];
    const raw = await rawRedis();
    try {
      for (const key of keys) await raw.set(`${prefix}cache:${key}`, '1', 'PX', 60_000);
      const patterns = ['*', 'user:*', 'user:?', 'user:[0-9]*', 'user:[^0-9]', 'user:[1-1]?'];
      patterns.push(
        '*:*',
        'a\\*b',
        'a.b',
        'x\\[y\\]',
        'q\\?',
        'kb-search:*',
        'weird\\\\key',
        '[uf]*',
      );
      for (const pattern of patterns) {
        const match = escapeGlob(`${prefix}cache:`) + pattern;
        const fromRedis: string[] = [];
        let cursor = '0';
        do {
          const [next, found] = await raw.scan(cursor, 'MATCH', match, 'COUNT', 100);
          cursor = next;
          fromRedis.push(...found.map((k) => k.slice(`${prefix}cache:`.length)));
        } while (cursor !== '0');
        const regex = globToRegExp(pattern);
        const fromRegex = keys.filter((k) => regex.test(k));
        expect(fromRegex.sort(), pattern).toEqual(fromRedis.sort());
      }
    } finally {
      raw.disconnect();
    }
  });

  it('loads a key once however many ask for it at the same time', async () => {
    const [r1] = region<number>();
    const s = source(7);
    const slow = async () => {
      await new Promise((r) => setTimeout(r, 30));
      return s.load();
    };
    const answers = await Promise.all(Array.from({ length: 20 }, () => r1.get('k', slow)));
    expect(answers).toEqual(Array(20).fill(7));
    expect(s.loads).toBe(1);
    expect(await r1.get('k', slow)).toBe(7);
    expect(s.loads).toBe(1);
  });

  it('answers a second instance from Redis without loading again', async () => {
    const [r1, r2] = region<{ n: number }>();
    const s = source({ n: 1 });
    expect(await r1.get('k', s.load)).toEqual({ n: 1 });
    const hitsBefore = two.cache.l2CacheCounts.hits;
    expect(await r2.get('k', s.load)).toEqual({ n: 1 });
    expect(s.loads).toBe(1);
    expect(two.cache.l2CacheCounts.hits).toBe(hitsBefore + 1);
  });

  it('a delete on one instance reaches the other’s memory', async () => {
    const [r1, r2] = region<string>();
    const s = source('old');
    expect(await r2.get('k', s.load)).toBe('old');
    s.value = 'new';
    expect(await r2.get('k', s.load)).toBe('old');
    await r1.delete('k');
    await until(async () => (await r2.get('k', s.load)) === 'new', 'the new value on two');
  });

  it('invalidates a glob in Redis and in every instance, and counts the keys', async () => {
    const [r1, r2] = region<number>();
    const name = `r${String(regionName)}`;
    for (const id of ['a1', 'a2', 'b1']) await r1.get(id, () => Promise.resolve(1));
    await r2.get('a3', () => Promise.resolve(1));
    // a3 is in Redis (written by two) and in two's memory; a1, a2 in Redis and one's memory.
    // Redis writes are not awaited by readers: wait until all four are there.
    const raw = await rawRedis();
    const full = ['a1', 'a2', 'b1', 'a3'].map((id) => `${prefix}cache:${name}:${id}`);
    await until(async () => (await raw.exists(...full)) === 4, 'the keys written to Redis');
    raw.disconnect();
    expect(await one.cache.invalidate(`${name}:a*`)).toBe(3);
    await until(async () => {
      const stats = await two.cache.stats();
      return stats.regions.find((r) => r.name === name)?.size === 0;
    }, 'two’s memory emptied');
    const s = source(2);
    expect(await r2.get('a1', s.load)).toBe(2);
    expect(await r1.get('b1', s.load)).toBe(1);
    expect(s.loads).toBe(1);
  });

  it('does not keep what a load read before an invalidation that arrived during it', async () => {
    const [r1] = region<string>();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const pending = r1.get('k', async () => {
      await gate;
      return 'stale';
    });
    await one.cache.invalidate('*');
    release();
    expect(await pending).toBe('stale');
    expect(await r1.get('k', () => Promise.resolve('fresh'))).toBe('fresh');
  });

  it('empties its memory when its subscription comes back after a dropped connection', async () => {
    const [, r2] = region<string>();
    const name = `r${String(regionName)}`;
    await r2.get('k', () => Promise.resolve('v'));
    const raw = await rawRedis();
    try {
      const clients = await raw.call('CLIENT', 'LIST', 'TYPE', 'pubsub');
      const ids = String(clients)
        .split('\n')
        .filter((line) => line.includes(` name=${prefix}pubsub `))
        .map((line) => /\bid=(\d+)/.exec(line)?.[1]);
      expect(ids.length).toBe(2);
      // Kill only instance two's subscriber: the one created last has the larger id.
      const newest = Math.max(...ids.map(Number));
      await raw.call('CLIENT', 'KILL', 'ID', String(newest));
    } finally {
      raw.disconnect();
    }
    await until(async () => {
      const stats = await two.cache.stats();
      return stats.regions.find((r) => r.name === name)?.size === 0;
    }, 'two’s memory emptied on reconnect');
  });
  // Last: a clear reaches the other instance a little later, and could spoil a load there.
  it('never touches keys outside its namespace', async () => {
    const [r1] = region<number>();
    await r1.get('k', () => Promise.resolve(1));
    const raw = await rawRedis();
    const otherPrefix = `test:${randomBytes(6).toString('hex')}:`;
    const outside = [`${prefix}user:1`, `${prefix}rl:x`, `${otherPrefix}cache:r1:k`];
    try {
      for (const key of outside) await raw.set(key, '1', 'PX', 60_000);
      expect(await one.cache.clear()).toBeGreaterThanOrEqual(1);
      for (const key of outside) expect(await raw.exists(key), key).toBe(1);
      expect((await one.cache.stats()).redis.keys).toBe(0);
    } finally {
      await raw.unlink(...outside);
      raw.disconnect();
    }
  });
});

describe('RedisCacheLayer across a dropped connection', () => {
  it('deletes again, once Redis is back, a key whose delete failed', async () => {
    const prefix = `test:${randomBytes(6).toString('hex')}:`;
    const raw = await rawRedis();
    const redis = createRedis(REDIS_URL, prefix);
    expect(await redisConnected(redis, 5000)).toBe(true);
    const layer = new RedisCacheLayer(redis, prefix, log);
    try {
      await raw.set(`${prefix}cache:user:1`, 'old', 'PX', 60_000);
      const id = await redis.client('ID');
      await raw.call('CLIENT', 'KILL', 'ID', String(id));
      await until(() => Promise.resolve(redis.status !== 'ready'), 'the connection seen as lost');
      await layer.delete('user:1');
      expect(await raw.exists(`${prefix}cache:user:1`)).toBe(1);
      await until(
        async () => (await raw.exists(`${prefix}cache:user:1`)) === 0,
        'the key deleted after the reconnection',
      );
    } finally {
      redis.disconnect();
      await deleteRedisPrefix(REDIS_URL, prefix);
      raw.disconnect();
    }
  });
});

describe('LayeredCache without a reachable Redis', () => {
  it('answers from the loader and memory, and reports Redis as not connected', async () => {
    const prefix = 'test:down:';
    const redis = createRedis('redis://127.0.0.1:1', prefix);
    const pubsub = redisPubSub(redis, prefix, log);
    const cache = new LayeredCache(pubsub, redis, prefix, log);
    try {
      const r = cache.region<number>('r', regionOptions);
      const s = source(5);
      expect(await r.get('k', s.load)).toBe(5);
      expect(await r.get('k', s.load)).toBe(5);
      expect(s.loads).toBe(1);
      await r.delete('k');
      expect(await r.get('k', s.load)).toBe(5);
      expect(s.loads).toBe(2);
      const stats = await cache.stats();
      expect(stats.redis).toEqual({ connected: false, used_memory: '0B', keys: 0 });
      expect(stats.l1_cache).toMatchObject({ size: 1, hits: 1, misses: 2 });
      await expect(cache.invalidate('*')).rejects.toThrow();
    } finally {
      cache.close();
      await pubsub.close();
      redis.disconnect();
    }
  });
});
