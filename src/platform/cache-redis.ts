import type { Redis } from 'ioredis';
import type { CacheCounts } from './cache.js';
import { escapeGlob } from './glob.js';
import type { Logger } from './logger.js';
import type { OutageNotice } from './outages.js';

const SCAN_BATCH = 500;
const NAMESPACE = 'cache:';
/** Deletes that failed while Redis was away, kept to be sent when it is back (at most). */
const MAX_UNSENT = 10_000;

/**
 * The cache's second layer: text values under `<REDIS_PREFIX>cache:`. Reads and writes never
 * throw (a failing Redis costs a load, not a request); bulk deletes SCAN the namespace and UNLINK
 * what they find, batch by batch, and never use KEYS or FLUSH*.
 */
export class RedisCacheLayer implements CacheCounts {
  hits = 0;
  misses = 0;
  /** Keys whose delete failed: sent again when the connection is back. */
  private readonly unsent = new Set<string>();

  constructor(
    private readonly redis: Redis,
    /** REDIS_PREFIX, which the client adds to every key it is given but not to SCAN patterns. */
    private readonly redisPrefix: string,
    private readonly log: Logger,
    /** Told of a failure first: a lost Redis is logged there once, not per read. */
    private readonly outages?: OutageNotice,
  ) {
    redis.on('ready', () => {
      void this.sendUnsent();
    });
  }

  private failed(err: unknown, message: string): void {
    if (this.outages?.noticed(err) !== true) this.log.warn({ err }, message);
  }

  async get(key: string): Promise<string | undefined> {
    try {
      const text = await this.redis.get(NAMESPACE + key);
      if (text === null) this.misses += 1;
      else this.hits += 1;
      return text ?? undefined;
    } catch (err) {
      this.failed(err, 'cache: Redis read failed; loading instead');
      return undefined;
    }
  }

  set(key: string, text: string, ttlMs: number): void {
    this.redis.set(NAMESPACE + key, text, 'PX', ttlMs).catch((err: unknown) => {
      this.failed(err, 'cache: Redis write failed');
    });
  }

  /**
   * A change committed while Redis is away must still reach it: the key is deleted as soon as the
   * connection is back (memory lifetimes cover the time between).
   */
  async delete(key: string): Promise<void> {
    try {
      await this.redis.unlink(NAMESPACE + key);
    } catch (err) {
      this.failed(err, 'cache: Redis delete failed; sent again once Redis is back');
      if (this.unsent.size < MAX_UNSENT) this.unsent.add(key);
    }
  }

  private async sendUnsent(): Promise<void> {
    const keys = [...this.unsent];
    this.unsent.clear();
    for (let i = 0; i < keys.length; i += SCAN_BATCH) {
      const batch = keys.slice(i, i + SCAN_BATCH);
      await this.redis.unlink(...batch.map((k) => NAMESPACE + k)).catch(() => {
        for (const key of batch) this.unsent.add(key);
      });
    }
  }

  /** Deletes the keys matching a glob (relative to the namespace); returns the ones it removed. */
  async deleteMatching(pattern: string): Promise<string[]> {
    const removed: string[] = [];
    await this.scan(pattern, async (keys) => {
      // The client would prefix these again: it is handed the names without REDIS_PREFIX.
      const names = keys.map((k) => k.slice(this.redisPrefix.length));
      const results = await this.redis.pipeline(names.map((name) => ['unlink', name])).exec();
      keys.forEach((key, i) => {
        if (results?.[i]?.[1] === 1)
          removed.push(key.slice(this.redisPrefix.length + NAMESPACE.length));
      });
    });
    return removed;
  }

  async stats(): Promise<{ connected: boolean; used_memory: string; keys: number }> {
    if (this.redis.status !== 'ready') return { connected: false, used_memory: '0B', keys: 0 };
    try {
      const info = await this.redis.info('memory');
      const usedMemory = /^used_memory_human:(\S+)/m.exec(info)?.[1] ?? 'unknown';
      let keys = 0;
      await this.scan('*', (found) => {
        keys += found.length;
        return Promise.resolve();
      });
      return { connected: true, used_memory: usedMemory, keys };
    } catch {
      return { connected: false, used_memory: '0B', keys: 0 };
    }
  }

  private async scan(pattern: string, each: (keys: string[]) => Promise<void>): Promise<void> {
    const match = escapeGlob(this.redisPrefix + NAMESPACE) + pattern;
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', match, 'COUNT', SCAN_BATCH);
      cursor = next;
      if (keys.length > 0) await each(keys);
    } while (cursor !== '0');
  }
}
