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

describe.each(stores)('leases (%s)', (kind, store) => {
  const pass = async (ms: number) => {
    if (kind === 'memory') clock += ms;
    else await new Promise((resolve) => setTimeout(resolve, ms));
  };

  it('admits up to the capacity, in order of entry, and renewing is never refused', async () => {
    const key = `lease:${randomUUID()}`;
    const a = await store.lease(key, 'a', 60_000, { capacity: 2 });
    const b = await store.lease(key, 'b', 60_000, { capacity: 2 });
    expect(a).toMatchObject({ rank: 0, renewed: false });
    expect(b).toMatchObject({ rank: 1, renewed: false });
    expect(await store.lease(key, 'c', 60_000, { capacity: 2 })).toBeUndefined();
    expect(await store.lease(key, 'b', 60_000, { capacity: 2 })).toMatchObject({
      rank: 1,
      order: b?.order,
      renewed: true,
    });
    await store.dropLease(key, 'a');
    expect(await store.lease(key, 'b', 60_000)).toMatchObject({ rank: 0, renewed: true });
    expect(await store.lease(key, 'c', 60_000, { capacity: 2 })).toMatchObject({ rank: 1 });
  });

  it('drops a member whose lease expired; one coming back at its old order goes first', async () => {
    const key = `lease:${randomUUID()}`;
    const first = await store.lease(key, 'first', 100);
    await store.lease(key, 'second', 60_000);
    await pass(150);
    expect(await store.lease(key, 'second', 60_000)).toMatchObject({ rank: 0 });
    const back = await store.lease(key, 'first', 60_000, { order: first?.order ?? 0 });
    expect(back).toMatchObject({ rank: 0, renewed: false, order: first?.order });
    expect(await store.lease(key, 'second', 60_000)).toMatchObject({ rank: 1 });
  });
});
