import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRedis,
  memoryStore,
  redisConnected,
  redisStore,
  type KeyValueStore,
} from '../src/platform/kv.js';
import { REDIS_URL } from './helpers/env.js';
import { deleteRedisPrefix } from './helpers/local-servers.js';

const prefix = `test:kv:${randomUUID()}:`;
let clock = 1_000_000;
const redis = createRedis(REDIS_URL, prefix);
const stores: [string, KeyValueStore][] = [
  ['memory', memoryStore(() => clock)],
  ['redis', redisStore(redis)],
];

beforeAll(async () => {
  expect(await redisConnected(redis, 5000)).toBe(true);
});

afterAll(async () => {
  for (const [, store] of stores) await store.close();
  await deleteRedisPrefix(REDIS_URL, prefix);
});

describe.each(stores)('expiring values (%s)', (kind, store) => {
  it('stores, replaces and reads a value', async () => {
    await store.put('voice:a', '{"x":1}', 60_000);
    expect(await store.get('voice:a')).toBe('{"x":1}');
    await store.put('voice:a', 'ü € 🩺', 60_000);
    expect(await store.get('voice:a')).toBe('ü € 🩺');
    expect(await store.get('voice:absent')).toBeUndefined();
  });

  it('forgets a value when it expires', async () => {
    await store.put('voice:short', 'v', 50);
    if (kind === 'memory') clock += 51;
    else await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await store.get('voice:short')).toBeUndefined();
  });

  it('keeps flags and values apart from counters', async () => {
    await store.setFlag('flag:x', 60);
    expect(await store.anyFlag(['flag:y', 'flag:x'])).toBe(true);
    expect(await store.get('flag:x')).toBe('1');
  });
});
