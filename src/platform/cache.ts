/** Look-ups counted since a cache was made; the numbers only grow (clearing keeps them). */
export interface CacheCounts {
  readonly hits: number;
  readonly misses: number;
}

/**
 * A bounded in-process cache with per-entry expiry (the L1 layer). Oldest entries are dropped
 * first when it is full. Not shared between instances: keep TTLs short where staleness matters.
 * Hits and misses are plain integers, read by the metrics at scrape time, not per look-up.
 */
export class TtlCache<V> implements CacheCounts {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private hitCount = 0;
  private missCount = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.expiresAt <= this.now()) {
      if (entry !== undefined) this.entries.delete(key);
      this.missCount += 1;
      return undefined;
    }
    this.hitCount += 1;
    return entry.value;
  }

  set(key: string, value: V): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.now() + this.ttlMs });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get hits(): number {
    return this.hitCount;
  }

  get misses(): number {
    return this.missCount;
  }

  get size(): number {
    return this.entries.size;
  }
}
