import { createHash } from 'node:crypto';
import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, featureFlags } from '../src/db/schema/index.js';
import { flagsRepo } from '../src/modules/flags/repo.js';
import type { FlagDto } from '../src/modules/flags/schema.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, errorOf, type TestUser } from './helpers/factories.js';

const BASE = '/api/admin/feature-flags';
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** DECISIONS 7, computed here from node:crypto rather than through the service's code. */
const inRollout = (flag: string, userId: string, pct: number) =>
  createHash('sha256').update(`${flag}:${userId}`).digest().readUInt32BE(0) % 100 < pct;

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

function client(t: () => TestApp) {
  return (user: TestUser, method: Method, url: string, payload?: unknown) =>
    t().app.inject({
      method,
      url,
      headers: { ...bearer(user.access), 'user-agent': 'flags-test/1.0' },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
}

describe.each(['postgres', 'pglite'] as const)('feature flags (%s)', (backend) => {
  let t: TestApp;
  let clock = Date.parse('2026-11-24T08:00:00.000Z');
  let admin: TestUser;
  let user: TestUser;
  const call = client(() => t);
  const create = async (body: Record<string, unknown>) => {
    const res = await call(admin, 'POST', BASE, body);
    expect(res.statusCode, res.body).toBe(201);
    return dataOf<FlagDto>(res);
  };
  const flagOf = async (name: string) =>
    dataOf<FlagDto>(await call(admin, 'GET', `${BASE}/${name}`));
  const evaluated = async (u: TestUser) =>
    dataOf<Record<string, boolean>>(await call(u, 'GET', '/api/feature-flags'));
  const stored = () => t.deps.database.db.select().from(featureFlags).orderBy(featureFlags.name);
  const auditOf = (name: string) =>
    t.deps.database.db
      .select()
      .from(auditLogs)
      .where(and(eq(auditLogs.resourceType, 'feature_flag'), eq(auditLogs.resourceId, name)))
      .orderBy(asc(auditLogs.seq));

  beforeAll(async () => {
    t = await createTestApp({ backend, now: () => new Date(clock) });
    admin = await createUser(t.app, t.deps, { admin: true });
    user = await createUser(t.app, t.deps);
  });
  afterAll(() => t.close());

  it('creates a flag with the defaults, and reads it back', async () => {
    const flag = await create({ name: 'defaults.only' });
    expect(flag).toEqual({
      name: 'defaults.only',
      enabled: false,
      description: '',
      rollout_percentage: 100,
      created_at: new Date(clock).toISOString(),
      updated_at: new Date(clock).toISOString(),
    });
    expect(flag.created_at).toMatch(ISO_Z);
    expect(await flagOf('defaults.only')).toEqual(flag);
  });

  it('creates a flag with every field given', async () => {
    const body = {
      name: 'full-fields_1',
      enabled: true,
      description: 'Line one\nline two, ünïcödé 🩺',
      rollout_percentage: 0,
    };
    const flag = await create(body);
    expect(flag).toMatchObject(body);
    expect(await flagOf(body.name)).toEqual(flag);
    expect(await create({ name: 'max-desc', description: 'd'.repeat(500) })).toMatchObject({
      description: 'd'.repeat(500),
    });
  });

  it('lists every flag sorted by name', async () => {
    for (const name of ['zz.last', 'aa.first', 'mm.middle']) await create({ name });
    const { flags } = dataOf<{ flags: FlagDto[] }>(await call(admin, 'GET', BASE));
    const names = flags.map((f) => f.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual((await stored()).map((r) => r.name));
    expect(names).toEqual(expect.arrayContaining(['aa.first', 'mm.middle', 'zz.last']));
  });

  it('refuses a duplicate name with 409 and keeps the first flag', async () => {
    const first = await create({ name: 'dup.name', description: 'first' });
    const res = await call(admin, 'POST', BASE, { name: 'dup.name', enabled: true });
    expect(errorOf(res, 409).code).toBe('CONFLICT');
    expect(await flagOf('dup.name')).toEqual(first);
    expect((await auditOf('dup.name')).map((e) => e.action)).toEqual(['flag.created']);
  });

  it('answers 404 NOT_FOUND for a flag that does not exist, on every route', async () => {
    const url = `${BASE}/no.such.flag`;
    for (const [method, path, payload] of [
      ['GET', url, undefined],
      ['PATCH', url, { enabled: true }],
      ['DELETE', url, undefined],
      ['POST', `${url}/toggle`, undefined],
    ] as const) {
      const res = await call(admin, method, path, payload);
      expect(errorOf(res, 404).code, `${method} ${path}`).toBe('NOT_FOUND');
    }
    expect((await stored()).some((r) => r.name === 'no.such.flag')).toBe(false);
  });

  const fieldsOf = (res: Parameters<typeof errorOf>[0]) => {
    const error = errorOf(res, 422);
    expect(error.code).toBe('VALIDATION_ERROR');
    return (error.details as { field: string }[]).map((d) => d.field);
  };

  it.each([
    ['upper case', 'New_UI'],
    ['a leading digit', '1flag'],
    ['a leading dot', '.flag'],
    ['one character', 'a'],
    ['65 characters', `a${'b'.repeat(64)}`],
    ['a space', 'new ui'],
    ['a slash', 'new/ui'],
    ['a colon', 'new:ui'],
    ['a non-ASCII letter', 'névé'],
    ['empty', ''],
    ['a number', 42],
    ['null', null],
  ])('refuses a name with %s: 422 naming body.name', async (_what, name) => {
    const before = await stored();
    expect(fieldsOf(await call(admin, 'POST', BASE, { name }))).toEqual(['body.name']);
    expect(await stored()).toEqual(before);
  });

  it('says what a name must be', async () => {
    const error = errorOf(await call(admin, 'POST', BASE, { name: 'EHR' }), 422);
    expect(error.details).toEqual([
      { field: 'body.name', message: expect.stringMatching(/lower-case letter.*1 to 63/) },
    ]);
  });

  it('accepts names at the edges of the pattern', async () => {
    for (const name of ['ab', `a${'z'.repeat(63)}`, 'a.b-c_d.0-9']) {
      expect((await create({ name })).name).toBe(name);
    }
  });

  it.each([
    ['rollout_percentage -1', { rollout_percentage: -1 }, 'body.rollout_percentage'],
    ['rollout_percentage 101', { rollout_percentage: 101 }, 'body.rollout_percentage'],
    ['rollout_percentage 1.5', { rollout_percentage: 1.5 }, 'body.rollout_percentage'],
    ['rollout_percentage "50"', { rollout_percentage: '50' }, 'body.rollout_percentage'],
    ['rollout_percentage null', { rollout_percentage: null }, 'body.rollout_percentage'],
    ['enabled "true"', { enabled: 'true' }, 'body.enabled'],
    ['enabled 1', { enabled: 1 }, 'body.enabled'],
    ['description over 500 characters', { description: 'd'.repeat(501) }, 'body.description'],
    ['description with a NUL', { description: 'a\u0000b' }, 'body.description'],
    ['description as a number', { description: 5 }, 'body.description'],
    ['an unknown field', { owner: 'me' }, 'body.owner'],
    ['created_at', { created_at: '2026-01-01T00:00:00.000Z' }, 'body.created_at'],
  ])('refuses %s on create and on update', async (_what, bad, field) => {
    if (!(await stored()).some((r) => r.name === 'valid.target')) {
      await create({ name: 'valid.target', description: 'kept' });
    }
    const before = await stored();
    expect(fieldsOf(await call(admin, 'POST', BASE, { name: 'never.made', ...bad }))).toEqual([
      field,
    ]);
    expect(fieldsOf(await call(admin, 'PATCH', `${BASE}/valid.target`, bad))).toEqual([field]);
    expect(await stored()).toEqual(before);
  });

  it('refuses an empty PATCH and a POST without a name', async () => {
    await create({ name: 'patch.empty' });
    const before = await stored();
    expect(fieldsOf(await call(admin, 'PATCH', `${BASE}/patch.empty`, {}))).toEqual(['body']);
    expect(fieldsOf(await call(admin, 'POST', BASE, { enabled: true }))).toEqual(['body.name']);
    expect(await stored()).toEqual(before);
    expect((await auditOf('patch.empty')).map((e) => e.action)).toEqual(['flag.created']);
  });

  it('refuses a path name that fails the pattern with 422 naming params.flag_name', async () => {
    for (const name of ['Bad', '1abc', 'x', `a${'b'.repeat(64)}`, 'a%20b', "'%20OR%201=1"]) {
      for (const [method, path, payload] of [
        ['GET', `${BASE}/${name}`, undefined],
        ['PATCH', `${BASE}/${name}`, { enabled: true }],
        ['DELETE', `${BASE}/${name}`, undefined],
        ['POST', `${BASE}/${name}/toggle`, undefined],
      ] as const) {
        const res = await call(admin, method, path, payload);
        expect(fieldsOf(res), `${method} ${path}`).toEqual(['params.flag_name']);
      }
    }
  });

  it('patches any of enabled, rollout_percentage and description, auditing before and after', async () => {
    const created = await create({ name: 'patch.me', rollout_percentage: 10 });
    clock += 60_000;
    const res = await call(admin, 'PATCH', `${BASE}/patch.me`, {
      enabled: true,
      rollout_percentage: 25,
    });
    const patched = dataOf<FlagDto>(res);
    expect(patched).toEqual({
      ...created,
      enabled: true,
      rollout_percentage: 25,
      updated_at: new Date(clock).toISOString(),
    });
    clock += 60_000;
    const described = dataOf<FlagDto>(
      await call(admin, 'PATCH', `${BASE}/patch.me`, { description: 'Now described' }),
    );
    expect(described).toMatchObject({ enabled: true, rollout_percentage: 25 });
    expect(described.description).toBe('Now described');

    const entries = await auditOf('patch.me');
    expect(entries.map((e) => e.action)).toEqual(['flag.created', 'flag.updated', 'flag.updated']);
    const [, update] = entries;
    expect(update).toMatchObject({
      actorId: admin.id,
      actorEmail: admin.email,
      resourceType: 'feature_flag',
      resourceId: 'patch.me',
      success: true,
      requestId: res.headers['x-request-id'],
      userAgent: 'flags-test/1.0',
      details: { before: created, after: patched },
    });
    expect(update?.ip).toBeTruthy();
  });

  it('changes nothing for a PATCH that repeats the stored values', async () => {
    const created = await create({ name: 'patch.same', enabled: true, rollout_percentage: 40 });
    clock += 60_000;
    const same = { enabled: true, rollout_percentage: 40, description: '' };
    expect(dataOf(await call(admin, 'PATCH', `${BASE}/patch.same`, same))).toEqual(created);
    expect((await auditOf('patch.same')).map((e) => e.action)).toEqual(['flag.created']);
  });

  it('toggles: twice is back where it started, each flip audited', async () => {
    const created = await create({ name: 'toggle.twice' });
    const first = dataOf<FlagDto>(await call(admin, 'POST', `${BASE}/toggle.twice/toggle`));
    expect(first.enabled).toBe(true);
    const second = dataOf<FlagDto>(await call(admin, 'POST', `${BASE}/toggle.twice/toggle`));
    expect(second.enabled).toBe(false);
    const entries = await auditOf('toggle.twice');
    expect(entries.map((e) => e.action)).toEqual(['flag.created', 'flag.toggled', 'flag.toggled']);
    expect(entries[0]?.details).toEqual({ before: null, after: created });
    expect(entries[1]?.details).toEqual({ before: created, after: first });
    expect(entries[2]?.details).toEqual({ before: first, after: second });
  });

  it('flips once per toggle when toggles arrive at the same time', async () => {
    await create({ name: 'toggle.race' });
    const n = 7;
    const results = await Promise.all(
      Array.from({ length: n }, () => call(admin, 'POST', `${BASE}/toggle.race/toggle`)),
    );
    const seen = results.map((r) => dataOf<FlagDto>(r).enabled);
    // Odd number of flips from false: on; the answers alternate in commit order.
    expect((await flagOf('toggle.race')).enabled).toBe(true);
    expect(seen.filter(Boolean)).toHaveLength(Math.ceil(n / 2));
    const toggles = (await auditOf('toggle.race')).filter((e) => e.action === 'flag.toggled');
    expect(toggles).toHaveLength(n);
    toggles.forEach((entry, i) => {
      const { before, after } = entry.details as { before: FlagDto; after: FlagDto };
      expect(before.enabled, `flip ${String(i)}`).toBe(i % 2 === 1);
      expect(after.enabled).toBe(i % 2 === 0);
    });
  });

  it('deletes a flag (200 with a message), audited with the flag before and null after', async () => {
    const created = await create({ name: 'delete.me', enabled: true });
    expect(await evaluated(user)).toHaveProperty(['delete.me'], true);
    const res = await call(admin, 'DELETE', `${BASE}/delete.me`);
    expect(dataOf(res)).toEqual({ message: 'Feature flag deleted' });
    expect(errorOf(await call(admin, 'GET', `${BASE}/delete.me`), 404).code).toBe('NOT_FOUND');
    expect(errorOf(await call(admin, 'DELETE', `${BASE}/delete.me`), 404).code).toBe('NOT_FOUND');
    const entries = await auditOf('delete.me');
    expect(entries.map((e) => e.action)).toEqual(['flag.created', 'flag.deleted']);
    expect(entries[1]).toMatchObject({
      actorId: admin.id,
      requestId: res.headers['x-request-id'],
      details: { before: created, after: null },
    });
    expect(await evaluated(user)).not.toHaveProperty(['delete.me']);
    expect(await t.deps.flags.isEnabled('delete.me', user.id)).toBe(false);
    // The name is free again.
    expect((await create({ name: 'delete.me' })).enabled).toBe(false);
  });

  it('keeps the audit chain valid through every change', async () => {
    expect(await t.deps.audit.verify()).toMatchObject({ valid: true, broken_at: null });
  });

  it('evaluates a 50% rollout for users in and out of it as the formula says', async () => {
    const users = [user];
    const name = 'rollout.half';
    while (
      users.length < 40 &&
      !(
        users.some((u) => inRollout(name, u.id, 50)) &&
        users.some((u) => !inRollout(name, u.id, 50))
      )
    ) {
      users.push(await createUser(t.app, t.deps));
    }
    await create({ name, enabled: true, rollout_percentage: 50 });
    await create({ name: 'rollout.off', enabled: false, rollout_percentage: 100 });
    await create({ name: 'rollout.all', enabled: true, rollout_percentage: 100 });
    await create({ name: 'rollout.none', enabled: true, rollout_percentage: 0 });
    const names = (await stored()).map((r) => r.name);
    let inside = 0;
    for (const u of users) {
      const values = await evaluated(u);
      expect(Object.keys(values).sort()).toEqual([...names].sort());
      expect(values[name], u.id).toBe(inRollout(name, u.id, 50));
      expect(values).toMatchObject({
        'rollout.off': false,
        'rollout.all': true,
        'rollout.none': false,
      });
      expect(await t.deps.flags.isEnabled(name, u.id)).toBe(values[name]);
      if (values[name] === true) inside += 1;
    }
    expect(inside).toBeGreaterThan(0);
    expect(inside).toBeLessThan(users.length);
    expect(await t.deps.flags.isEnabled('no.such.flag', user.id)).toBe(false);
    expect(await t.deps.flags.evaluate(user.id)).toEqual(await evaluated(user));
  });

  it('shows every change at once on the instance that made it', async () => {
    await create({ name: 'local.change', enabled: true });
    expect((await evaluated(user))['local.change']).toBe(true);
    dataOf(await call(admin, 'POST', `${BASE}/local.change/toggle`));
    expect((await evaluated(user))['local.change']).toBe(false);
    dataOf(await call(admin, 'PATCH', `${BASE}/local.change`, { enabled: true }));
    expect((await evaluated(user))['local.change']).toBe(true);
    dataOf(await call(admin, 'PATCH', `${BASE}/local.change`, { rollout_percentage: 0 }));
    expect((await evaluated(user))['local.change']).toBe(false);
  });

  it('stores what the database constraints allow only', async () => {
    const db = t.deps.database.db;
    const row = (name: string, rolloutPercentage = 10) => ({
      name,
      enabled: true,
      description: '',
      rolloutPercentage,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    await expect(flagsRepo.insert(db, row('Bad Name'))).rejects.toThrow();
    await expect(flagsRepo.insert(db, row('ok.name', 101))).rejects.toThrow();
    await expect(flagsRepo.insert(db, row('ok.name', -1))).rejects.toThrow();
    expect((await stored()).some((r) => r.name === 'ok.name')).toBe(false);
  });
});

describe('feature flags on two instances, one Redis', () => {
  let one: TestApp;
  let two: TestApp;
  let admin: TestUser;
  let user: TestUser;
  // A minute in memory on both: only the invalidation can make a change visible within the test.
  const env = { FLAG_CACHE_TTL_MS: '60000' };
  beforeAll(async () => {
    one = await createTestApp({ env });
    two = await createTestApp({
      env,
      shared: {
        databaseUrl: one.deps.config.databaseUrl ?? '',
        redisPrefix: one.deps.config.redisPrefix,
      },
    });
    admin = await createUser(one.app, one.deps, { admin: true });
    user = await createUser(one.app, one.deps);
  });
  afterAll(async () => {
    await two.close();
    await one.close();
  });

  const callOne = client(() => one);
  const callTwo = client(() => two);
  const evaluatedOn = async (call: typeof callOne) =>
    dataOf<Record<string, boolean>>(await call(user, 'GET', '/api/feature-flags'));

  /** Polls until `check` holds, for at most 5 s (a functional check, not a timing one). */
  async function eventually(check: () => Promise<boolean>): Promise<boolean> {
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      if (await check()) return true;
      await new Promise((r) => setTimeout(r, 20));
    }
    return check();
  }

  it('serves the cached flags until a change through the service invalidates them', async () => {
    dataOf(await callOne(admin, 'POST', BASE, { name: 'cluster.flag', enabled: true }));
    expect((await evaluatedOn(callTwo))['cluster.flag']).toBe(true);
    // Behind the service's back: nothing is invalidated, so instance two keeps its cached value.
    await flagsRepo.update(two.deps.database.db, 'cluster.flag', { rolloutPercentage: 0 });
    expect((await evaluatedOn(callTwo))['cluster.flag']).toBe(true);
    await flagsRepo.update(two.deps.database.db, 'cluster.flag', { rolloutPercentage: 100 });

    dataOf(await callOne(admin, 'POST', `${BASE}/cluster.flag/toggle`));
    expect(await eventually(async () => !(await evaluatedOn(callTwo))['cluster.flag'])).toBe(true);
    expect(await two.deps.flags.isEnabled('cluster.flag', user.id)).toBe(false);
  });

  it('carries updates, creations and deletions both ways', async () => {
    expect((await evaluatedOn(callOne))['cluster.flag']).toBe(false);
    dataOf(await callTwo(admin, 'PATCH', `${BASE}/cluster.flag`, { enabled: true }));
    expect(
      await eventually(async () => (await evaluatedOn(callOne))['cluster.flag'] === true),
    ).toBe(true);

    dataOf(await callTwo(admin, 'POST', BASE, { name: 'cluster.new', enabled: true }));
    expect(await eventually(async () => (await evaluatedOn(callOne))['cluster.new'] === true)).toBe(
      true,
    );

    expect((await evaluatedOn(callTwo))['cluster.flag']).toBe(true);
    dataOf(await callOne(admin, 'DELETE', `${BASE}/cluster.flag`));
    expect(await eventually(async () => !('cluster.flag' in (await evaluatedOn(callTwo))))).toBe(
      true,
    );
  });
});
