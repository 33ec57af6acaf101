/** The shapes of the two-layer cache (src/platform/layered-cache.ts). */

/** How one family of keys (`<region>:<id>`) is kept. */
export interface RegionOptions<V> {
  /** Lifetime in each instance's memory (L1); it also bounds staleness while Redis is away. */
  l1TtlMs: number;
  /** Lifetime in Redis (L2); 0 keeps the region in memory only. */
  l2TtlMs: number;
  /** L1 entries at most; the least recently used go first. */
  maxEntries?: number;
  /** To and from the text kept in Redis (JSON when absent). */
  encode?: (value: V) => string;
  decode?: (text: string) => V;
}

export interface CacheRegion<V> {
  /**
   * The cached value, else `load()`'s, which is then kept (`undefined` is never kept). Concurrent
   * misses of one key on an instance share one load.
   */
  get(id: string, load: () => Promise<V | undefined>): Promise<V | undefined>;
  /** Drops the key from Redis and from the memory of every instance. */
  delete(id: string): Promise<void>;
}

/** The admin view of the cache (spec 2.9, plus the second layer's counts and the regions). */
export interface CacheStats {
  redis: { connected: boolean; used_memory: string; keys: number };
  l1_cache: { size: number; hits: number; misses: number };
  l2_cache: { enabled: boolean; hits: number; misses: number };
  regions: { name: string; size: number; hits: number; misses: number }[];
}
