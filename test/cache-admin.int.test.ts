import { and, desc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs } from '../src/db/schema/index.js';
import type { CacheStats } from '../src/platform/layered-cache.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, errorOf, type TestUser } from './helpers/factories.js';
import {
  createKbApp,
  sampleText,
  search,
  uploadNew,
  waitIndexed,
  type KbApp,
} from './helpers/knowledge.js';

/**
 * The cache as administrators and users meet it (spec 4.6, DECISIONS 7): statistics, clear and
 * invalidate through HTTP, user lookups and knowledge-base search results kept in it, and two
 * instances on one Redis dropping what the other changed.
 */

type App = TestApp['app'];

async function until(check: () => Promise<boolean>, what: string, limitMs = 5000) {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const stats = async (app: App, token: string) =>
  dataOf<CacheStats>(
    await app.inject({ method: 'GET', url: '/api/admin/cache/stats', headers: bearer(token) }),
  );
const regionSize = async (app: App, token: string, name: string) =>
  (await stats(app, token)).regions.find((r) => r.name === name)?.size ?? -1;
const post = (app: App, token: string, url: string, payload?: Record<string, unknown>) =>
  app.inject({
    method: 'POST',
    url,
    headers: bearer(token),
    ...(payload === undefined ? {} : { payload }),
  });

describe('cache administration, two instances on one Redis', () => {
  let one: KbApp;
  let two: TestApp;
  let admin: TestUser;

  beforeAll(async () => {
    one = await createKbApp();
    two = await createTestApp({
      shared: {
        databaseUrl: one.deps.config.databaseUrl ?? '',
        redisPrefix: one.deps.config.redisPrefix,
      },
      env: { KB_WORKER_ENABLED: 'false' },
    });
    admin = one.admin;
  });
  afterAll(async () => {
    await two.close();
    await one.close();
  });

  it('reports Redis, this instance’s memory and each region', async () => {
    // A user looked up now is in Redis. The admin's own entry may not be: its promotion deletes
    // it once more a second later (layered-cache.ts), which a slow machine can see in between.
    const user = await createUser(one.app, one.deps);
    await one.app.inject({ method: 'GET', url: '/api/users/me', headers: bearer(user.access) });
    const s = await stats(one.app, admin.access);
    expect(s.redis.connected).toBe(true);
    expect(s.redis.used_memory).toMatch(/^\d+(\.\d+)?[BKMGT]?$/);
    expect(s.redis.keys).toBeGreaterThanOrEqual(1);
    expect(s.l2_cache.enabled).toBe(true);
    expect(s.regions.map((r) => r.name)).toEqual(expect.arrayContaining(['user', 'kb-search']));
    expect(s.l1_cache.size).toBe(s.regions.reduce((n, r) => n + r.size, 0));
  });

  it('invalidates a glob everywhere, answers the count and audits it', async () => {
    const user = await createUser(two.app, two.deps);
    await two.app.inject({ method: 'GET', url: '/api/users/me', headers: bearer(user.access) });
    const res = await post(one.app, admin.access, '/api/admin/cache/invalidate', {
      pattern: `user:${user.id}`,
    });
    expect(dataOf<{ invalidated: number }>(res).invalidated).toBe(1);
    const [entry] = await one.deps.database.db
      .select()
      .from(auditLogs)
      .where(and(eq(auditLogs.action, 'cache.invalidated'), eq(auditLogs.actorId, admin.id)))
      .orderBy(desc(auditLogs.seq))
      .limit(1);
    expect(entry).toMatchObject({
      resourceType: 'cache',
      requestId: res.headers['x-request-id'],
      details: { pattern: `user:${user.id}`, invalidated: 1 },
    });
    expect(
      await post(one.app, admin.access, '/api/admin/cache/invalidate', { pattern: 'x:*' }),
    ).toHaveProperty('statusCode', 200);
  });

  it('refuses what is not a glob, naming the field', async () => {
    for (const payload of [{ pattern: 'user:[ab' }, { pattern: '' }, {}, { pattern: 3 }]) {
      const res = await post(one.app, admin.access, '/api/admin/cache/invalidate', payload);
      expect(errorOf(res, 422).details).toEqual([
        expect.objectContaining({ field: 'body.pattern' }),
      ]);
    }
    const extra = await post(one.app, admin.access, '/api/admin/cache/invalidate', {
      pattern: '*',
      also: 1,
    });
    expect(errorOf(extra, 422).code).toBe('VALIDATION_ERROR');
  });

  it('clears the namespace on every instance and audits it', async () => {
    const user = await createUser(two.app, two.deps);
    await two.app.inject({ method: 'GET', url: '/api/users/me', headers: bearer(user.access) });
    expect(await regionSize(two.app, admin.access, 'user')).toBeGreaterThan(0);
    const res = await post(one.app, admin.access, '/api/admin/cache/clear');
    expect(dataOf<{ cleared: number }>(res).cleared).toBeGreaterThanOrEqual(1);
    // Reading the stats on two authenticates the admin again: at most that one entry is back.
    await until(
      async () => (await regionSize(two.app, admin.access, 'user')) <= 1,
      'two’s memory emptied',
    );
    const actions = await one.deps.database.db
      .select({ action: auditLogs.action })
      .from(auditLogs)
      .where(eq(auditLogs.requestId, String(res.headers['x-request-id'])));
    expect(actions).toEqual([{ action: 'cache.cleared' }]);
  });

  it('keeps search results until the corpus changes, on either instance', async () => {
    const token = admin.access;
    const first = await uploadNew(one.app, token, { file: sampleText('zephyrine') });
    await waitIndexed(one.app, token, first);
    const ids = async (q: string) => (await search(two.app, token, q)).map((h) => h.document_id);
    expect(await ids('zephyrine')).toEqual([first.id]);
    const before = await ids('quillotine');
    const hitsBefore = (await stats(two.app, token)).regions.find((r) => r.name === 'kb-search');
    expect(await ids('quillotine')).toEqual(before);
    const hitsAfter = (await stats(two.app, token)).regions.find((r) => r.name === 'kb-search');
    expect(hitsAfter?.hits).toBe((hitsBefore?.hits ?? 0) + 1);

    // A new document indexed by instance one: two's cached results for the query are dropped
    // (unchanged, they would be answered from memory for a minute).
    const second = await uploadNew(one.app, token, { file: sampleText('quillotine') });
    await waitIndexed(one.app, token, second);
    await until(
      async () => (await ids('quillotine'))[0] === second.id,
      'the new document found first through two',
    );

    // A document deleted through one: two no longer answers it from its memory.
    const del = await one.app.inject({
      method: 'DELETE',
      url: `/api/admin/kb/documents/${first.id}`,
      headers: bearer(token),
    });
    expect(del.statusCode).toBe(200);
    await until(
      async () => !(await ids('zephyrine')).includes(first.id),
      'the deleted document gone from two',
    );
  });

  it('a deactivation on one instance reaches token checks on the other', async () => {
    const user = await createUser(two.app, two.deps);
    const me = () =>
      two.app.inject({ method: 'GET', url: '/api/users/me', headers: bearer(user.access) });
    expect((await me()).statusCode).toBe(200);
    const res = await one.app.inject({
      method: 'PUT',
      url: `/api/users/${user.id}/deactivate`,
      headers: bearer(admin.access),
    });
    expect(res.statusCode).toBe(200);
    await until(async () => (await me()).statusCode === 401, 'the token refused on two');
  });
});

describe('cache administration on the embedded defaults', () => {
  let t: TestApp;
  let admin: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite' });
    admin = await createUser(t.app, t.deps, { admin: true });
  });
  afterAll(async () => {
    await t.close();
  });

  it('has no Redis, says so, and still invalidates its memory', async () => {
    const s = await stats(t.app, admin.access);
    expect(s.redis).toEqual({ connected: false, used_memory: '0B', keys: 0 });
    expect(s.l2_cache.enabled).toBe(false);
    expect(await regionSize(t.app, admin.access, 'user')).toBeGreaterThanOrEqual(1);
    const res = await post(t.app, admin.access, '/api/admin/cache/invalidate', {
      pattern: 'user:*',
    });
    expect(dataOf<{ invalidated: number }>(res).invalidated).toBeGreaterThanOrEqual(1);
  });
});
