import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { CacheCounts } from './cache.js';
import type { CacheRegion, CacheStats, RegionOptions } from './cache-types.js';
import { RedisCacheLayer } from './cache-redis.js';
import { globToRegExp } from './glob.js';
import type { Logger } from './logger.js';
import type { OutageNotice } from './outages.js';
import type { PubSub } from './pubsub.js';

export type { CacheRegion, CacheStats, RegionOptions } from './cache-types.js';

/** A message on the invalidation channel: keys, or a glob, to drop from every L1. */
type Invalidation = { keys: string[] } | { pattern: string };

const CHANNEL = 'cache:invalidate';
/**
 * A deleted key is deleted once more this long after: an instance that read the database just
 * before the change committed may write the old value back to Redis after the first delete.
 */
const SECOND_DELETE_MS = 1000;
const RESUBSCRIBE_MS = 2000;

interface Region {
  readonly name: string;
  readonly l1: LRUCache<string, { v: unknown }>;
  /** False when the memory lifetime is 0: every read goes to Redis or the loader. */
  readonly useL1: boolean;
  readonly counts: { hits: number; misses: number };
}

/**
 * The service's one cache: an LRU with expiry in each instance (L1) over Redis (L2), both under
 * one namespace (`<REDIS_PREFIX>cache:`). Writers drop keys in Redis and tell every instance to
 * drop them from memory over pub/sub; a subscriber that reconnects empties its memory, since it may
 * have missed messages, and L1 lifetimes bound staleness while Redis is unreachable. A failing
 * Redis never fails a read: the loader answers. Without Redis (the embedded default) the cache is
 * L1 alone and invalidation stays in the process.
 */
export class LayeredCache {
  private readonly regions = new Map<string, Region>();
  private readonly inflight = new Map<string, Promise<unknown>>();
  private readonly l2: RedisCacheLayer | undefined;
  /**
   * The loads in progress, by key: an invalidation that reaches one marks it, and it then keeps
   * nothing (what it read may predate the change).
   */
  private readonly loading = new Map<string, { invalidated: boolean }>();
  private unsubscribe: (() => void) | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly pubsub: PubSub,
    redis: Redis | undefined,
    /** REDIS_PREFIX, which the Redis client adds to every key it is given. */
    redisPrefix: string,
    private readonly log: Logger,
    outages?: OutageNotice,
  ) {
    this.l2 =
      redis === undefined ? undefined : new RedisCacheLayer(redis, redisPrefix, log, outages);
  }

  /**
   * Subscribes to invalidations from other instances. While that fails (Redis away at start-up)
   * it is retried in the background, and memory is emptied once it succeeds; meanwhile the L1
   * lifetimes bound staleness.
   */
  async start(): Promise<void> {
    this.pubsub.onReconnect(() => {
      this.forgetAll();
    });
    await this.subscribe();
  }

  private async subscribe(): Promise<boolean> {
    try {
      this.unsubscribe = await this.pubsub.subscribe(CHANNEL, (message) => {
        if (isInvalidation(message)) this.dropLocal(message);
      });
      return true;
    } catch (err) {
      this.log.warn({ err }, 'cache: not subscribed to invalidations yet; retrying');
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        void this.subscribe().then((ok) => {
          if (ok) this.forgetAll();
        });
      }, RESUBSCRIBE_MS);
      timer.unref();
      this.timers.add(timer);
      return false;
    }
  }

  /** Empties this instance's memory (messages may have been missed). */
  private forgetAll(): void {
    for (const mark of this.loading.values()) mark.invalidated = true;
    for (const region of this.regions.values()) region.l1.clear();
  }

  region<V>(name: string, options: RegionOptions<V>): CacheRegion<V> {
    if (!/^[a-z][a-z0-9_-]*$/.test(name) || this.regions.has(name)) {
      throw new Error(`cache region name "${name}" is invalid or taken`);
    }
    const l1 = new LRUCache<string, { v: unknown }>({
      max: options.maxEntries ?? 10_000,
      ttl: Math.max(1, options.l1TtlMs),
    });
    const region: Region = { name, l1, useL1: options.l1TtlMs > 0, counts: { hits: 0, misses: 0 } };
    this.regions.set(name, region);
    const encode = options.encode ?? JSON.stringify;
    const decode = options.decode ?? ((text: string) => JSON.parse(text) as V);
    const l2 = options.l2TtlMs > 0 ? this.l2 : undefined;
    return {
      get: async (id, load) => {
        const hit = l1.get(id);
        if (hit !== undefined) {
          region.counts.hits += 1;
          return hit.v as V;
        }
        region.counts.misses += 1;
        const key = `${name}:${id}`;
        const pending = this.inflight.get(key) as Promise<V | undefined> | undefined;
        if (pending !== undefined) return pending;
        const loading = this.load(region, id, load, l2, options.l2TtlMs, { encode, decode });
        this.inflight.set(key, loading);
        try {
          return await loading;
        } finally {
          if (this.inflight.get(key) === loading) this.inflight.delete(key);
        }
      },
      delete: async (id) => {
        const key = `${name}:${id}`;
        await this.deleteEverywhere(key, l2 !== undefined);
        if (l2 === undefined) return;
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          void this.deleteEverywhere(key, true);
        }, SECOND_DELETE_MS);
        timer.unref();
        this.timers.add(timer);
      },
    };
  }

  /** Drops every key matching the glob, in Redis and in every instance; answers how many. */
  async invalidate(pattern: string): Promise<number> {
    const matcher = globToRegExp(pattern);
    const local = this.dropLocal({ pattern }, matcher);
    const removed = (await this.l2?.deleteMatching(pattern)) ?? [];
    this.pubsub.publish(CHANNEL, { pattern } satisfies Invalidation);
    return new Set([...local, ...removed]).size;
  }

  /** Empties the cache namespace (never anything else) in Redis and in every instance. */
  clear(): Promise<number> {
    return this.invalidate('*');
  }

  async stats(): Promise<CacheStats> {
    const regions = [...this.regions.values()].map((r) => ({
      name: r.name,
      size: r.l1.size,
      ...r.counts,
    }));
    const sum = (pick: (r: (typeof regions)[number]) => number) =>
      regions.reduce((total, r) => total + pick(r), 0);
    return {
      redis: (await this.l2?.stats()) ?? { connected: false, used_memory: '0B', keys: 0 },
      l1_cache: {
        size: sum((r) => r.size),
        hits: sum((r) => r.hits),
        misses: sum((r) => r.misses),
      },
      l2_cache: {
        enabled: this.l2 !== undefined,
        hits: this.l2?.hits ?? 0,
        misses: this.l2?.misses ?? 0,
      },
      regions,
    };
  }

  /** First-layer hits and misses of every region, for cache_requests_total{layer="l1"}. */
  get l1Counts(): CacheCounts {
    const regions = () => [...this.regions.values()];
    return {
      get hits() {
        return regions().reduce((n, r) => n + r.counts.hits, 0);
      },
      get misses() {
        return regions().reduce((n, r) => n + r.counts.misses, 0);
      },
    };
  }

  /** Second-layer hits and misses, for cache_requests_total{layer="l2"}. */
  get l2CacheCounts(): CacheCounts {
    return this.l2 ?? { hits: 0, misses: 0 };
  }

  close(): void {
    this.unsubscribe?.();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private async deleteEverywhere(key: string, inRedis: boolean): Promise<void> {
    this.dropLocal({ keys: [key] });
    if (inRedis) await this.l2?.delete(key);
    this.pubsub.publish(CHANNEL, { keys: [key] } satisfies Invalidation);
  }

  private async load<V>(
    region: Region,
    id: string,
    load: () => Promise<V | undefined>,
    l2: RedisCacheLayer | undefined,
    l2TtlMs: number,
    codec: { encode: (value: V) => string; decode: (text: string) => V },
  ): Promise<V | undefined> {
    const key = `${region.name}:${id}`;
    const mark = { invalidated: false };
    this.loading.set(key, mark);
    try {
      const stored = decodeOrDrop(await l2?.get(key), codec.decode);
      if (stored !== undefined) {
        if (!mark.invalidated && region.useL1) region.l1.set(id, { v: stored });
        return stored;
      }
      const value = await load();
      if (value === undefined || mark.invalidated) return value;
      if (region.useL1) region.l1.set(id, { v: value });
      l2?.set(key, codec.encode(value), l2TtlMs);
      return value;
    } finally {
      if (this.loading.get(key) === mark) this.loading.delete(key);
    }
  }

  /** Drops matching keys from this instance's memory; returns the keys it held. */
  private dropLocal(message: Invalidation, matcher?: RegExp): string[] {
    const regex = 'keys' in message ? undefined : (matcher ?? globToRegExp(message.pattern));
    const match = (key: string) =>
      regex === undefined ? 'keys' in message && message.keys.includes(key) : regex.test(key);
    for (const [key, mark] of this.loading) {
      if (!match(key)) continue;
      mark.invalidated = true;
      // Later readers start a load of their own instead of waiting for this one.
      this.inflight.delete(key);
    }
    const dropped: string[] = [];
    if ('keys' in message) {
      for (const key of message.keys) {
        const cut = key.indexOf(':');
        const region = this.regions.get(key.slice(0, cut));
        if (region?.l1.delete(key.slice(cut + 1)) === true) dropped.push(key);
      }
      return dropped;
    }
    for (const region of this.regions.values()) {
      for (const id of [...region.l1.keys()]) {
        const key = `${region.name}:${id}`;
        if (match(key)) {
          region.l1.delete(id);
          dropped.push(key);
        }
      }
    }
    return dropped;
  }
}

/** A value read from Redis, or undefined when it cannot be decoded (then it is loaded afresh). */
function decodeOrDrop<V>(text: string | undefined, decode: (text: string) => V): V | undefined {
  if (text === undefined) return undefined;
  try {
    return decode(text);
  } catch {
    return undefined;
  }
}

function isInvalidation(message: unknown): message is Invalidation {
  if (typeof message !== 'object' || message === null) return false;
  const m = message as { keys?: unknown; pattern?: unknown };
  return Array.isArray(m.keys)
    ? m.keys.every((k) => typeof k === 'string')
    : typeof m.pattern === 'string';
}
