import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import type { Logger } from '../../platform/logger.js';
import { parseEntry, type InstanceEntry } from './socket-status.js';

/** What the socket hubs tell the registry. */
export interface SocketTracker {
  opened(endpoint: string, userId: string): void;
  closed(endpoint: string, userId: string): void;
}

export interface SocketRegistryOptions {
  /** How long an instance's entry lives after its last write. */
  ttlMs: number;
  /** How often a live instance rewrites its entry (well below `ttlMs`). */
  refreshMs: number;
  /** Changes are written this long after the first of them, together (default 250 ms). */
  debounceMs?: number;
}

/** Under the client's key prefix: the live instances (sorted set) and one entry per instance. */
const INSTANCES_KEY = 'ws-registry:instances';
const entryKey = (id: string) => `ws-registry:instance:${id}`;
/** Members whose score (the writer's clock) is this many TTLs old are dropped. */
const STALE_TTLS = 10;
const MAX_INSTANCES = 1000;

export interface RegistryView {
  entries: InstanceEntry[];
  /** `cluster`: every live instance (through Redis); `instance`: this process only. */
  scope: 'cluster' | 'instance';
}

/**
 * This instance's open sockets per user and endpoint, published to Redis so that any instance can
 * list every instance's. The entry is a JSON value with a TTL, rewritten every `refreshMs` and
 * shortly after changes; an instance that dies stops rewriting it and it expires. A sorted set
 * names the instances (never KEYS or SCAN); readers drop members whose entry is gone. Without
 * Redis the registry is this process only.
 */
export class SocketRegistry implements SocketTracker {
  readonly id: string;
  readonly hostname = hostname();
  readonly pid = process.pid;
  private readonly counts = new Map<string, Map<string, number>>();
  private readonly debounceMs: number;
  private refreshTimer: NodeJS.Timeout | undefined;
  private debounceTimer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private stopped = false;
  private failing = false;

  constructor(
    private readonly redis: Redis | undefined,
    private readonly log: Logger,
    private readonly options: SocketRegistryOptions,
  ) {
    this.id = `${this.hostname}:${String(this.pid)}:${randomUUID()}`;
    this.debounceMs = Math.min(options.debounceMs ?? 250, options.refreshMs);
  }

  /** Writes the entry now and then every `refreshMs`. */
  async start(): Promise<void> {
    if (this.redis === undefined) return;
    this.refreshTimer = setInterval(() => {
      void this.publish();
    }, this.options.refreshMs);
    this.refreshTimer.unref();
    await this.publish();
  }

  opened(endpoint: string, userId: string): void {
    this.change(endpoint, userId, 1);
  }

  closed(endpoint: string, userId: string): void {
    this.change(endpoint, userId, -1);
  }

  /** This instance's entry, from memory, as written at `at`. */
  entry(at = new Date()): InstanceEntry {
    const users: InstanceEntry['users'] = {};
    for (const [userId, endpoints] of this.counts) users[userId] = Object.fromEntries(endpoints);
    return {
      id: this.id,
      hostname: this.hostname,
      pid: this.pid,
      updated_at: at.toISOString(),
      users,
    };
  }

  /** Every live instance's entry; this instance's own from memory (it is the freshest). */
  async view(): Promise<RegistryView> {
    const own = this.entry();
    if (this.redis === undefined) return { entries: [own], scope: 'instance' };
    try {
      const ids = await this.redis.zrange(INSTANCES_KEY, 0, MAX_INSTANCES - 1);
      const values = ids.length === 0 ? [] : await this.redis.mget(ids.map(entryKey));
      const entries: InstanceEntry[] = [own];
      const gone: string[] = [];
      ids.forEach((id, i) => {
        if (id === this.id) return;
        const entry = parseEntry(values[i] ?? null);
        if (entry === undefined) gone.push(id);
        else entries.push(entry);
      });
      if (gone.length > 0) {
        // Expired entries of instances that died: their members go too.
        this.redis.zrem(INSTANCES_KEY, ...gone).catch(() => undefined);
      }
      return { entries, scope: 'cluster' };
    } catch (err) {
      this.log.warn({ err }, 'socket registry: Redis unavailable; answering for this instance');
      return { entries: [own], scope: 'instance' };
    }
  }

  /** Stops writing and removes this instance's entry. */
  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.refreshTimer);
    clearTimeout(this.debounceTimer);
    if (this.redis === undefined) return;
    await this.writing;
    try {
      await this.redis.multi().del(entryKey(this.id)).zrem(INSTANCES_KEY, this.id).exec();
    } catch {
      // Redis is away: the entry expires by itself within its TTL.
    }
  }

  private change(endpoint: string, userId: string, by: 1 | -1): void {
    let endpoints = this.counts.get(userId);
    if (endpoints === undefined) {
      if (by < 0) return;
      endpoints = new Map();
      this.counts.set(userId, endpoints);
    }
    const n = (endpoints.get(endpoint) ?? 0) + by;
    if (n > 0) endpoints.set(endpoint, n);
    else endpoints.delete(endpoint);
    if (endpoints.size === 0) this.counts.delete(userId);
    this.schedule();
  }

  private schedule(): void {
    if (this.redis === undefined || this.stopped || this.debounceTimer !== undefined) return;
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      void this.publish();
    }, this.debounceMs);
    this.debounceTimer.unref();
  }

  /** One write at a time, in order; a failure is logged once until a write succeeds again. */
  private publish(): Promise<void> {
    this.writing = this.writing.then(() => this.write());
    return this.writing;
  }

  private async write(): Promise<void> {
    const redis = this.redis;
    if (redis === undefined || this.stopped) return;
    const now = Date.now();
    const { ttlMs } = this.options;
    try {
      await redis
        .multi()
        .set(entryKey(this.id), JSON.stringify(this.entry(new Date(now))), 'PX', ttlMs)
        .zadd(INSTANCES_KEY, now, this.id)
        .zremrangebyscore(INSTANCES_KEY, '-inf', now - STALE_TTLS * ttlMs)
        .pexpire(INSTANCES_KEY, STALE_TTLS * ttlMs)
        .exec();
      if (this.failing) this.log.info('socket registry: writing to Redis again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.log.warn({ err }, 'socket registry: cannot write to Redis');
      this.failing = true;
    }
  }
}
