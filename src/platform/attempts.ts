import type { Redis } from 'ioredis';

/** The answer to a reservation: a numbered attempt, or a refusal. */
export type Reservation =
  /** The `attempt`-th attempt of the current window may run. */
  | { kind: 'granted'; attempt: number }
  /** A lock is in force until `until` (ms). */
  | { kind: 'locked'; until: number }
  /** `max` attempts of the window are already reserved, none of them has locked yet. */
  | { kind: 'full' };

export interface AttemptWindow {
  /** The caller's clock (ms): windows and locks follow it, not the store's. */
  now: number;
  windowMs: number;
  max: number;
  /** How long the store keeps an idle entry (ms): at least the window and the lock. */
  keepMs: number;
}

/**
 * Attempts counted before they run (password checks), per key, in a window that starts at the
 * first attempt, with a lock set by the caller. Every operation is atomic, so however many requests
 * reserve at once, at most `max` attempts are granted per window. Redis when configured (shared by
 * every instance), otherwise in-process.
 */
export interface AttemptStore {
  reserve(key: string, window: AttemptWindow): Promise<Reservation>;
  /** Locks `key` until `until` (ms) and starts a new count after it. */
  lock(key: string, until: number, keepMs: number): Promise<void>;
  /** Starts a new count (a right password); a lock in force at `now` stays. */
  clear(key: string, now: number): Promise<void>;
}

/** Hash fields: n (attempts in the window), start (window start, ms), until (lock end, ms). */
const RESERVE_LUA = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
local h = redis.call('HMGET', KEYS[1], 'n', 'start', 'until')
local lockedUntil = tonumber(h[3]) or 0
if lockedUntil > now then return {-1, h[3]} end
local n = tonumber(h[1]) or 0
local start = h[2] or ARGV[1]
if lockedUntil > 0 or tonumber(start) + window <= now then
  n = 0
  start = ARGV[1]
end
if n >= max then return {-2, '0'} end
redis.call('HSET', KEYS[1], 'n', n + 1, 'start', start, 'until', '0')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {n + 1, '0'}`;

const LOCK_LUA = `
redis.call('HSET', KEYS[1], 'n', 0, 'until', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

const CLEAR_LUA = `
local lockedUntil = tonumber(redis.call('HGET', KEYS[1], 'until')) or 0
if lockedUntil <= tonumber(ARGV[1]) then redis.call('DEL', KEYS[1]) end
return 1`;

interface RedisWithAttempts extends Redis {
  attemptReserve(key: string, ...args: string[]): Promise<[number, string]>;
  attemptLock(key: string, until: string, keepMs: string): Promise<number>;
  attemptClear(key: string, now: string): Promise<number>;
}

export function redisAttempts(redis: Redis): AttemptStore {
  const client = redis as RedisWithAttempts;
  client.defineCommand('attemptReserve', { numberOfKeys: 1, lua: RESERVE_LUA });
  client.defineCommand('attemptLock', { numberOfKeys: 1, lua: LOCK_LUA });
  client.defineCommand('attemptClear', { numberOfKeys: 1, lua: CLEAR_LUA });
  return {
    async reserve(key, { now, windowMs, max, keepMs }) {
      const [n, until] = await client.attemptReserve(
        key,
        String(now),
        String(windowMs),
        String(max),
        String(Math.ceil(keepMs)),
      );
      if (n === -1) return { kind: 'locked', until: Number(until) };
      return n === -2 ? { kind: 'full' } : { kind: 'granted', attempt: n };
    },
    async lock(key, until, keepMs) {
      await client.attemptLock(key, String(until), String(Math.ceil(keepMs)));
    },
    async clear(key, now) {
      await client.attemptClear(key, String(now));
    },
  };
}

interface Entry {
  n: number;
  start: number;
  until: number;
  /** Dropped once the caller's clock passes this. */
  keepUntil: number;
}

/** The same behaviour in-process, for a single instance; idle entries are swept once a minute. */
export function memoryAttempts(): AttemptStore {
  const entries = new Map<string, Entry>();
  let latest = 0;
  const sweep = setInterval(() => {
    for (const [k, e] of entries) if (e.keepUntil <= latest) entries.delete(k);
  }, 60_000);
  sweep.unref();
  return {
    reserve(key, { now, windowMs, max, keepMs }) {
      latest = Math.max(latest, now);
      const e = entries.get(key) ?? { n: 0, start: now, until: 0, keepUntil: 0 };
      if (e.until > now) return Promise.resolve({ kind: 'locked', until: e.until });
      if (e.until > 0 || e.start + windowMs <= now) Object.assign(e, { n: 0, start: now });
      if (e.n >= max) return Promise.resolve({ kind: 'full' });
      Object.assign(e, { n: e.n + 1, until: 0, keepUntil: now + keepMs });
      entries.set(key, e);
      return Promise.resolve({ kind: 'granted', attempt: e.n });
    },
    lock(key, until, keepMs) {
      const e = entries.get(key) ?? { n: 0, start: 0, until: 0, keepUntil: 0 };
      entries.set(key, { ...e, n: 0, until, keepUntil: Math.max(e.keepUntil, latest + keepMs) });
      return Promise.resolve();
    },
    clear(key, now) {
      latest = Math.max(latest, now);
      if ((entries.get(key)?.until ?? 0) <= now) entries.delete(key);
      return Promise.resolve();
    },
  };
}
