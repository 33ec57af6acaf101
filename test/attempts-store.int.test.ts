import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  memoryAttempts,
  redisAttempts,
  type AttemptStore,
  type AttemptWindow,
} from '../src/platform/attempts.js';
import { createRedis, redisConnected } from '../src/platform/kv.js';
import { deleteRedisPrefix } from './helpers/app.js';
import { REDIS_URL } from './helpers/env.js';

const T0 = 1_795_345_200_000; // ms, like Date.now()
const WINDOW = 900_000;
const at = (now: number): AttemptWindow => ({ now, windowMs: WINDOW, max: 5, keepMs: WINDOW });
const newKey = () => `attempts:test:${randomBytes(6).toString('hex')}`;

const prefix = `test:${randomBytes(6).toString('hex')}:`;
let redis: Redis | undefined;
afterAll(async () => {
  await redis?.quit();
  await deleteRedisPrefix(prefix);
});

/** The same contract on Redis (Lua scripts) and in-process: both serve the login lockout. */
describe.each([
  ['in-process', () => Promise.resolve(memoryAttempts())],
  [
    'Redis',
    async () => {
      redis = createRedis(REDIS_URL, prefix);
      expect(await redisConnected(redis, 5000)).toBe(true);
      return redisAttempts(redis);
    },
  ],
])('attempt store (%s)', (_name, open) => {
  let store: AttemptStore;
  it('grants five numbered attempts of 50 reserved at once, then refuses as full', async () => {
    store = await open();
    const key = newKey();
    const all = await Promise.all(Array.from({ length: 50 }, () => store.reserve(key, at(T0))));
    const granted = all.flatMap((r) => (r.kind === 'granted' ? [r.attempt] : []));
    expect(granted.sort()).toEqual([1, 2, 3, 4, 5]);
    expect(all.filter((r) => r.kind === 'full')).toHaveLength(45);
  });

  it('starts a new window once the first attempt is a window old', async () => {
    const key = newKey();
    for (let i = 1; i <= 5; i++) await store.reserve(key, at(T0 + i));
    expect(await store.reserve(key, at(T0 + WINDOW))).toEqual({ kind: 'full' });
    expect(await store.reserve(key, at(T0 + 1 + WINDOW))).toEqual({ kind: 'granted', attempt: 1 });
  });

  it('refuses while locked, not after; the lock starts a new count', async () => {
    const key = newKey();
    for (let i = 0; i < 5; i++) await store.reserve(key, at(T0));
    await store.lock(key, T0 + 60_000, WINDOW);
    expect(await store.reserve(key, at(T0 + 59_999))).toEqual({
      kind: 'locked',
      until: T0 + 60_000,
    });
    expect(await store.reserve(key, at(T0 + 60_000))).toEqual({ kind: 'granted', attempt: 1 });
  });

  it('clear starts a new count but leaves a lock in force', async () => {
    const key = newKey();
    for (let i = 0; i < 4; i++) await store.reserve(key, at(T0));
    await store.clear(key, T0);
    expect(await store.reserve(key, at(T0))).toEqual({ kind: 'granted', attempt: 1 });
    await store.lock(key, T0 + 60_000, WINDOW);
    await store.clear(key, T0 + 1);
    expect(await store.reserve(key, at(T0 + 2))).toMatchObject({ kind: 'locked' });
  });

  it('keeps keys apart', async () => {
    const a = newKey();
    for (let i = 0; i < 5; i++) await store.reserve(a, at(T0));
    expect(await store.reserve(newKey(), at(T0))).toEqual({ kind: 'granted', attempt: 1 });
  });
});
