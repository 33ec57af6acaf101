import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auditLogs,
  conversations,
  feedback,
  messages,
  refreshTokens,
  userLocks,
  users,
} from '../src/db/schema/index.js';
import { PanelSummaryService, startOfUtcDay } from '../src/modules/admin/summary.js';
import { HISTORY_LIMIT } from '../src/modules/admin/users-schema.js';
import { HealthService } from '../src/modules/health/service.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import {
  bearer,
  createUser,
  dataOf,
  errorOf,
  login,
  uniqueEmail,
  type TestUser,
} from './helpers/factories.js';

const PANEL = '/api/admin/panel';
const UNKNOWN = '7d1f2b9e-9f7a-4c56-8a3e-2b1c0d9e8f7a';

interface Stats {
  conversations: number;
  messages: number;
  last_login: string | null;
}
interface PanelUser {
  id: string;
  email: string;
  is_active: boolean;
  admin_role: string;
  last_login: string | null;
  statistics: Stats;
}
interface Page {
  items: PanelUser[];
  total: number;
  offset: number;
  limit: number;
}
interface Summary {
  users: { total: number; active: number; admins: number };
  conversations: { total: number; today: number };
  system: { status: string; uptime: number };
}
interface RoleChange {
  timestamp: string;
  action: string;
  from_role: string | null;
  to_role: string;
  actor_id: string | null;
  actor_email: string | null;
  reason: string | null;
  request_id: string | null;
}
type LockReason = Record<string, unknown> & { kind: string; at: string };

describe('admin panel: summary and users (PostgreSQL + Redis)', () => {
  let t: TestApp;
  let admin: TestUser;
  beforeAll(async () => {
    t = await createTestApp();
    admin = await createUser(t.app, t.deps, { admin: true });
  });
  afterAll(() => t.close());

  const call = (
    method: 'GET' | 'PUT' | 'DELETE' | 'POST',
    url: string,
    token = admin.access,
    payload?: object,
  ) =>
    t.app.inject({
      method,
      url,
      headers: bearer(token),
      ...(payload === undefined ? {} : { payload }),
    });
  const put = (id: string, payload: object, token = admin.access) =>
    call('PUT', `${PANEL}/users/${id}`, token, payload);
  const db = () => t.deps.database.db;

  /** A conversation of `owner` with `count` messages on main; returns its id and message ids. */
  async function conversationOf(owner: TestUser, count: number) {
    const { id } = await t.deps.conversations.create(owner.id, { title: 'Panel case' });
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const { message } = await t.deps.messages.append(owner.id, id, {
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: `message ${String(i)}`,
      });
      ids.push(message.id);
    }
    return { id, ids };
  }

  const auditAbout = (userId: string, action: string) =>
    db()
      .select()
      .from(auditLogs)
      .where(and(eq(auditLogs.resourceId, userId), eq(auditLogs.action, action)))
      .orderBy(auditLogs.seq);

  async function wrongLogins(email: string, n: number) {
    for (let i = 0; i < n; i++) {
      const res = await login(t.app, email, 'not the password at all');
      expect(res.statusCode, res.body).toBe(401);
    }
  }

  describe('GET /summary', () => {
    it('counts users, active users, admins, conversations and today’s conversations', async () => {
      const before = dataOf<Summary>(await call('GET', `${PANEL}/summary`));
      const [a, b, c] = await Promise.all([
        createUser(t.app, t.deps),
        createUser(t.app, t.deps),
        createUser(t.app, t.deps, { admin: true }),
      ]);
      dataOf(await put(b.id, { is_active: false, reason: 'left the clinic' }));
      await conversationOf(a, 1);
      await conversationOf(a, 0);
      const old = await conversationOf(c, 2);
      await db()
        .update(conversations)
        .set({ createdAt: sql`now() - interval '2 days'` })
        .where(eq(conversations.id, old.id));
      const after = dataOf<Summary>(await call('GET', `${PANEL}/summary`));
      expect(after.users).toEqual({
        total: before.users.total + 3,
        active: before.users.active + 2,
        admins: before.users.admins + 1,
      });
      expect(after.conversations).toEqual({
        total: before.conversations.total + 3,
        today: before.conversations.today + 2,
      });
      // The same figures straight from the tables.
      const [row] = await db()
        .select({
          users: sql<number>`count(*)::int`,
          active: sql<number>`count(*) filter (where ${users.isActive})::int`,
          admins: sql<number>`count(*) filter (where ${users.adminRole} = 'admin')::int`,
        })
        .from(users);
      expect(after.users).toEqual({ total: row?.users, active: row?.active, admins: row?.admins });
      expect(after.conversations.total).toBe(await db().$count(conversations));
      expect(after.system.status).toBe('ok');
      expect(Number.isInteger(after.system.uptime)).toBe(true);
      expect(after.system.uptime).toBeGreaterThanOrEqual(0);
    });

    it('reports degraded when a readiness check fails, and whole seconds of uptime', async () => {
      const failing = new HealthService(
        'test',
        [
          { role: 'postgres', backend: 'postgresql', probe: () => Promise.resolve() },
          { role: 'redis', backend: 'redis', probe: () => Promise.reject(new Error('down')) },
        ],
        1000,
      );
      const service = new PanelSummaryService(
        db(),
        failing,
        () => new Date(),
        () => 42.9,
      );
      expect((await service.summary()).system).toEqual({ status: 'degraded', uptime: 42 });
    });

    it('starts the day at 00:00 UTC', () => {
      expect(startOfUtcDay(new Date('2026-11-24T23:59:59.999Z')).toISOString()).toBe(
        '2026-11-24T00:00:00.000Z',
      );
      expect(startOfUtcDay(new Date('2026-11-25T00:00:00.000Z')).toISOString()).toBe(
        '2026-11-25T00:00:00.000Z',
      );
    });
  });

  describe('GET /users', () => {
    it('pages users newest first with their conversation and message counts', async () => {
      const busy = await createUser(t.app, t.deps);
      const idle = await createUser(t.app, t.deps);
      const first = await conversationOf(busy, 3);
      await conversationOf(busy, 1);
      // A fork's own message counts too: messages across every branch.
      await t.deps.messages.fork(busy.id, first.id, first.ids[0] ?? '', 'Another way');
      const page = dataOf<Page>(await call('GET', `${PANEL}/users?offset=0&limit=2`));
      expect(page).toMatchObject({ offset: 0, limit: 2, total: await db().$count(users) });
      expect(page.items.map((u) => u.id)).toEqual([idle.id, busy.id]);
      const [idleItem, busyItem] = page.items;
      expect(idleItem?.statistics).toEqual({
        conversations: 0,
        messages: 0,
        last_login: idleItem?.last_login,
      });
      expect(busyItem?.statistics).toEqual({
        conversations: 2,
        messages: 5,
        last_login: busyItem?.last_login,
      });
      expect(busyItem?.statistics.last_login).toMatch(/Z$/);
      expect(busyItem).toMatchObject({ email: busy.email, is_active: true, admin_role: 'user' });
      const next = dataOf<Page>(await call('GET', `${PANEL}/users?offset=1&limit=1`));
      expect(next.items.map((u) => u.id)).toEqual([busy.id]);
    });

    it('defaults to offset 0 and limit 20, takes 100 and refuses 101', async () => {
      expect(dataOf<Page>(await call('GET', `${PANEL}/users`))).toMatchObject({
        offset: 0,
        limit: 20,
      });
      const all = dataOf<Page>(await call('GET', `${PANEL}/users?limit=100`));
      expect(all.items.length).toBe(Math.min(100, all.total));
      const err = errorOf(await call('GET', `${PANEL}/users?limit=101`), 422);
      expect(err.details).toEqual([{ field: 'query.limit', message: expect.any(String) }]);
    });

    it('is for administrators only', async () => {
      const u = await createUser(t.app, t.deps);
      expect(errorOf(await call('GET', `${PANEL}/users`, u.access), 403).code).toBe('FORBIDDEN');
      expect(errorOf(await t.app.inject({ method: 'GET', url: `${PANEL}/users` }), 401).code).toBe(
        'UNAUTHORIZED',
      );
    });
  });

  describe('GET /users/:user_id', () => {
    it('shows statistics, and a login lockout while it is in force', async () => {
      const u = await createUser(t.app, t.deps);
      await conversationOf(u, 2);
      const plain = dataOf<PanelUser & { locked_until: null; active_lock: boolean }>(
        await call('GET', `${PANEL}/users/${u.id}`),
      );
      expect(plain).toMatchObject({
        id: u.id,
        email: u.email,
        statistics: { conversations: 1, messages: 2 },
        locked_until: null,
        active_lock: false,
      });
      await wrongLogins(u.email, 5);
      expect((await login(t.app, u.email)).statusCode).toBe(429);
      const locked = dataOf<{ locked_until: string; active_lock: boolean }>(
        await call('GET', `${PANEL}/users/${u.id}`),
      );
      expect(locked.active_lock).toBe(true);
      expect(Date.parse(locked.locked_until)).toBeGreaterThan(Date.now());
    });

    it('answers 404 for an unknown id and 422 for a malformed one', async () => {
      expect(errorOf(await call('GET', `${PANEL}/users/${UNKNOWN}`), 404).code).toBe('NOT_FOUND');
      expect(errorOf(await call('GET', `${PANEL}/users/nope`), 422).details).toEqual([
        { field: 'params.user_id', message: 'must match format "uuid"' },
      ]);
    });
  });

  describe('PUT /users/:user_id', () => {
    it('requires a reason to deactivate, records it, and ends the user’s sessions', async () => {
      const u = await createUser(t.app, t.deps);
      const err = errorOf(await put(u.id, { is_active: false }), 422);
      expect(err.details).toEqual([{ field: 'body.reason', message: expect.any(String) }]);
      expect(await auditAbout(u.id, 'user.deactivated')).toEqual([]);
      dataOf(await call('GET', '/api/auth/me', u.access)); // still signed in
      const res = await put(u.id, { is_active: false, reason: '  On leave until March  ' });
      expect(dataOf(res)).toMatchObject({ id: u.id, is_active: false });
      const [entry] = await auditAbout(u.id, 'user.deactivated');
      expect(entry).toMatchObject({
        actorId: admin.id,
        actorEmail: admin.email,
        resourceType: 'user',
        details: { reason: 'On leave until March' },
        requestId: res.headers['x-request-id'],
      });
      expect(errorOf(await call('GET', '/api/auth/me', u.access), 401).code).toBe('UNAUTHORIZED');
      errorOf(await login(t.app, u.email), 403);
    });

    it('requires a reason to change the role, not for a role the user already has', async () => {
      const u = await createUser(t.app, t.deps);
      errorOf(await put(u.id, { admin_role: 'admin' }), 422);
      expect(dataOf(await put(u.id, { admin_role: 'user', full_name: 'Same Role' }))).toMatchObject(
        { admin_role: 'user', full_name: 'Same Role' },
      );
      expect(dataOf(await put(u.id, { is_active: true }))).toMatchObject({ is_active: true });
      dataOf(await put(u.id, { admin_role: 'admin', reason: 'Runs the night shift' }));
      errorOf(await put(u.id, { admin_role: 'user' }), 422);
      dataOf(await put(u.id, { admin_role: 'user', reason: 'Night shift over' }));
      const promoted = await auditAbout(u.id, 'user.promoted');
      const demoted = await auditAbout(u.id, 'user.demoted');
      expect(promoted.map((e) => e.details)).toEqual([{ reason: 'Runs the night shift' }]);
      expect(demoted.map((e) => e.details)).toEqual([{ reason: 'Night shift over' }]);
    });

    it('changes name and email without a reason; a taken email is 409', async () => {
      const u = await createUser(t.app, t.deps);
      const other = await createUser(t.app, t.deps);
      const email = uniqueEmail('panel');
      expect(dataOf(await put(u.id, { full_name: 'New Name', email }))).toMatchObject({
        full_name: 'New Name',
        email,
      });
      expect(errorOf(await put(u.id, { email: other.email.toUpperCase() }), 409).code).toBe(
        'CONFLICT',
      );
      expect((await login(t.app, email)).statusCode).toBe(200);
    });

    it('refuses an empty body, a reason alone, unknown fields and a bad reason (422)', async () => {
      const u = await createUser(t.app, t.deps);
      const cases: [object, string[]][] = [
        [{}, ['body']],
        [{ reason: 'Nothing to change' }, ['body']],
        [{ full_name: 'X', password: 'whatever 123' }, ['body.password']],
        [{ is_active: false, reason: '   ' }, ['body.reason']],
        [{ is_active: false, reason: 'r'.repeat(501) }, ['body.reason']],
        [{ is_active: false, reason: 'line\nbreak' }, ['body.reason']],
        [{ is_active: false, reason: 42 }, ['body.reason']],
      ];
      for (const [body, fields] of cases) {
        const err = errorOf(await put(u.id, body), 422);
        expect((err.details as { field: string }[]).map((d) => d.field)).toEqual(fields);
      }
      expect(dataOf(await call('GET', `${PANEL}/users/${u.id}`))).toMatchObject({
        is_active: true,
        full_name: 'Test User',
      });
      dataOf(await put(u.id, { is_active: false, reason: 'r'.repeat(500) }));
    });

    it('refuses self-deactivation and self-demotion (409) and unknown users (404)', async () => {
      const reason = 'Trying';
      for (const body of [
        { is_active: false, reason },
        { admin_role: 'user', reason },
      ]) {
        expect(errorOf(await put(admin.id, body), 409).code).toBe('CONFLICT');
      }
      expect(dataOf(await call('GET', '/api/auth/me'))).toMatchObject({ is_admin: true });
      expect(errorOf(await put(UNKNOWN, { full_name: 'Nobody' }), 404).code).toBe('NOT_FOUND');
    });
  });

  describe('DELETE /users/:user_id', () => {
    it('deletes the user and all they own; their tokens stop working at once', async () => {
      const u = await createUser(t.app, t.deps);
      const { id: conversationId } = await conversationOf(u, 2);
      await t.deps.feedback.submit(u.id, { sessionId: 's', rating: 5, category: 'other' });
      await wrongLogins(u.email, 5); // a lockout row too
      dataOf(await call('GET', '/api/auth/me', u.access));
      expect(await db().$count(userLocks, eq(userLocks.userId, u.id))).toBe(1);
      expect(await db().$count(feedback, eq(feedback.userId, u.id))).toBe(1);
      expect(await db().$count(messages, eq(messages.conversationId, conversationId))).toBe(2);
      const res = await call('DELETE', `${PANEL}/users/${u.id}`);
      expect(dataOf(res)).toEqual({ message: 'User deleted' });
      expect(errorOf(await call('GET', '/api/auth/me', u.access), 401).code).toBe('UNAUTHORIZED');
      const refreshed = await t.app.inject({
        method: 'POST',
        url: '/api/auth/refresh',
        payload: { refresh_token: u.refresh },
      });
      errorOf(refreshed, 401);
      for (const [table, column] of [
        [users, users.id],
        [conversations, conversations.userId],
        [feedback, feedback.userId],
        [refreshTokens, refreshTokens.userId],
        [userLocks, userLocks.userId],
      ] as const) {
        expect(await db().$count(table, eq(column, u.id))).toBe(0);
      }
      expect(await db().$count(messages, eq(messages.conversationId, conversationId))).toBe(0);
      const [deleted] = await auditAbout(u.id, 'user.deleted');
      expect(deleted).toMatchObject({
        actorId: admin.id,
        actorEmail: admin.email,
        resourceType: 'user',
        resourceId: u.id,
        requestId: res.headers['x-request-id'],
      });
      const own = await db().select().from(auditLogs).where(eq(auditLogs.actorId, u.id));
      expect(own.length).toBeGreaterThan(0);
      for (const e of own) expect(e.actorEmail).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(
        await db().$count(auditLogs, sql`lower(${auditLogs.actorEmail}) = lower(${u.email})`),
      ).toBe(0);
      expect(await t.deps.audit.verify()).toMatchObject({ valid: true });
      // The lockout counts per email whether or not an account has it (DECISIONS 8).
      errorOf(await login(t.app, u.email), 429);
      errorOf(await call('GET', `${PANEL}/users/${u.id}`), 404);
      errorOf(await call('DELETE', `${PANEL}/users/${u.id}`), 404);
    });

    it('deletes another administrator, never oneself (409)', async () => {
      const other = await createUser(t.app, t.deps, { admin: true });
      dataOf(await call('DELETE', `${PANEL}/users/${other.id}`));
      errorOf(await call('GET', '/api/users/me', other.access), 401);
      expect(errorOf(await call('DELETE', `${PANEL}/users/${admin.id}`), 409).code).toBe(
        'CONFLICT',
      );
      expect(errorOf(await call('DELETE', `${PANEL}/users/${UNKNOWN}`), 404).code).toBe(
        'NOT_FOUND',
      );
      dataOf(await call('GET', '/api/auth/me'));
    });
  });

  describe('GET /users/:user_id/role-history', () => {
    it('lists the registration role and every change, newest first, with reasons', async () => {
      const u = await createUser(t.app, t.deps);
      const promoted = await put(u.id, { admin_role: 'admin', reason: 'Covers for Ada' });
      dataOf(promoted);
      const demoted = await call('PUT', `/api/users/${u.id}/revoke-admin`);
      dataOf(demoted);
      const { items, total } = dataOf<{ items: RoleChange[]; total: number }>(
        await call('GET', `${PANEL}/users/${u.id}/role-history`),
      );
      expect(total).toBe(3);
      expect(items).toEqual([
        {
          timestamp: expect.stringMatching(/Z$/),
          action: 'user.demoted',
          from_role: 'admin',
          to_role: 'user',
          actor_id: admin.id,
          actor_email: admin.email,
          reason: null,
          request_id: demoted.headers['x-request-id'],
        },
        {
          timestamp: expect.stringMatching(/Z$/),
          action: 'user.promoted',
          from_role: 'user',
          to_role: 'admin',
          actor_id: admin.id,
          actor_email: admin.email,
          reason: 'Covers for Ada',
          request_id: promoted.headers['x-request-id'],
        },
        {
          timestamp: expect.stringMatching(/Z$/),
          action: 'auth.register',
          from_role: null,
          to_role: 'user',
          actor_id: u.id,
          actor_email: u.email,
          reason: null,
          request_id: expect.any(String),
        },
      ]);
      const times = items.map((i) => Date.parse(i.timestamp));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    });

    it('shows only that user’s changes, and 404 for an unknown user', async () => {
      const [a, b] = await Promise.all([createUser(t.app, t.deps), createUser(t.app, t.deps)]);
      dataOf(await put(b.id, { admin_role: 'admin', reason: 'B only' }));
      const history = dataOf<{ items: RoleChange[]; total: number }>(
        await call('GET', `${PANEL}/users/${a.id}/role-history`),
      );
      expect(history.items.map((i) => i.action)).toEqual(['auth.register']);
      expect(history.total).toBe(1);
      errorOf(await call('GET', `${PANEL}/users/${UNKNOWN}/role-history`), 404);
    });
  });

  describe('GET /users/:user_id/lock-reasons', () => {
    it('lists a lockout from five wrong logins and a deactivation with its reason, newest first', async () => {
      const u = await createUser(t.app, t.deps);
      const empty = dataOf<{ items: LockReason[]; total: number }>(
        await call('GET', `${PANEL}/users/${u.id}/lock-reasons`),
      );
      expect(empty).toEqual({ items: [], total: 0 });
      await wrongLogins(u.email, 5);
      const off = await put(u.id, { is_active: false, reason: 'Shared their password' });
      dataOf(off);
      const on = await put(u.id, { is_active: true, reason: 'Password reset done' });
      dataOf(on);
      const { items, total } = dataOf<{ items: LockReason[]; total: number }>(
        await call('GET', `${PANEL}/users/${u.id}/lock-reasons`),
      );
      expect(total).toBe(3);
      expect(items.map((i) => i.kind)).toEqual(['reactivation', 'deactivation', 'lockout']);
      const setBy = { id: admin.id, email: admin.email };
      expect(items[0]).toEqual({
        kind: 'reactivation',
        at: expect.stringMatching(/Z$/),
        reason: 'Password reset done',
        set_by: setBy,
        request_id: on.headers['x-request-id'],
      });
      expect(items[1]).toEqual({
        kind: 'deactivation',
        at: expect.stringMatching(/Z$/),
        reason: 'Shared their password',
        set_by: setBy,
        request_id: off.headers['x-request-id'],
      });
      const lockout = items[2];
      expect(lockout).toEqual({
        kind: 'lockout',
        at: lockout?.locked_at,
        reason: expect.stringContaining('5 failed logins'),
        failed_attempts: 5,
        ip: '127.0.0.1',
        locked_at: expect.stringMatching(/Z$/),
        locked_until: expect.stringMatching(/Z$/),
        active: true,
      });
      const lockedFor =
        Date.parse(String(lockout?.locked_until)) - Date.parse(String(lockout?.locked_at));
      // The lock's end is set a moment before its row is stamped.
      expect(lockedFor).toBeLessThanOrEqual(t.deps.config.lockout.lockSeconds * 1000);
      expect(lockedFor).toBeGreaterThan((t.deps.config.lockout.lockSeconds - 5) * 1000);
      const times = items.map((i) => Date.parse(i.at));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    });

    it('marks a lockout that has ended as inactive; a deactivation without a reason has null', async () => {
      const u = await createUser(t.app, t.deps);
      await wrongLogins(u.email, 5);
      await db()
        .update(userLocks)
        .set({
          lockedAt: sql`${userLocks.lockedAt} - interval '1 hour'`,
          lockedUntil: sql`${userLocks.lockedUntil} - interval '1 hour'`,
        })
        .where(eq(userLocks.userId, u.id));
      dataOf(await call('PUT', `/api/users/${u.id}/deactivate`));
      const { items } = dataOf<{ items: LockReason[] }>(
        await call('GET', `${PANEL}/users/${u.id}/lock-reasons`),
      );
      expect(items.map((i) => [i.kind, i.kind === 'lockout' ? i.active : i.reason])).toEqual([
        ['deactivation', null],
        ['lockout', false],
      ]);
      errorOf(await call('GET', `${PANEL}/users/${UNKNOWN}/lock-reasons`), 404);
    });

    it('answers the newest entries up to the limit, and counts them all in total', async () => {
      const u = await createUser(t.app, t.deps);
      const start = Date.parse('2026-01-01T00:00:00Z');
      // One more lockout than a history answers, a minute apart, then a deactivation (newest).
      await db()
        .insert(userLocks)
        .values(
          Array.from({ length: HISTORY_LIMIT + 1 }, (_, i) => ({
            id: crypto.randomUUID(),
            userId: u.id,
            reason: `lockout ${i}`,
            failedAttempts: 5,
            ip: null,
            lockedAt: new Date(start + i * 60_000),
            lockedUntil: new Date(start + i * 60_000 + 900_000),
          })),
        );
      dataOf(await put(u.id, { is_active: false, reason: 'Left the trust' }));
      const { items, total } = dataOf<{ items: LockReason[]; total: number }>(
        await call('GET', `${PANEL}/users/${u.id}/lock-reasons`),
      );
      expect(total).toBe(HISTORY_LIMIT + 2);
      expect(items).toHaveLength(HISTORY_LIMIT);
      expect(items[0]).toMatchObject({ kind: 'deactivation', reason: 'Left the trust' });
      // The two oldest lockouts are the ones left out.
      expect(items.at(-1)).toMatchObject({ kind: 'lockout', reason: 'lockout 2' });
    });
  });
});

describe('admin panel: the last administrator', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const activeAdmins = async () =>
    t.deps.database.db.$count(users, and(eq(users.adminRole, 'admin'), eq(users.isActive, true)));

  it('survives two administrators demoting each other through the panel at once', async () => {
    const a = await createUser(t.app, t.deps, { admin: true });
    const b = await createUser(t.app, t.deps, { admin: true });
    const demote = (caller: TestUser, target: TestUser) =>
      t.app.inject({
        method: 'PUT',
        url: `${PANEL}/users/${target.id}`,
        headers: bearer(caller.access),
        payload: { admin_role: 'user', reason: 'Mutual' },
      });
    const codes = (await Promise.all([demote(a, b), demote(b, a)])).map((r) => r.statusCode);
    // One wins; the other meets the check (409) or its own demotion first (403).
    expect([
      [200, 403],
      [200, 409],
    ]).toContainEqual(codes.sort());
    expect(await activeAdmins()).toBe(1);
  });

  it('survives two administrators deleting each other at once', async () => {
    const admins = await activeAdmins();
    const c = await createUser(t.app, t.deps, { admin: true });
    const d = await createUser(t.app, t.deps, { admin: true });
    // Leave c and d the only active administrators.
    await t.deps.database.db
      .update(users)
      .set({ isActive: false })
      .where(and(eq(users.adminRole, 'admin'), sql`${users.id} not in (${c.id}, ${d.id})`));
    expect(admins).toBe(1);
    const remove = (caller: TestUser, target: TestUser) =>
      t.app.inject({
        method: 'DELETE',
        url: `${PANEL}/users/${target.id}`,
        headers: bearer(caller.access),
      });
    const results = await Promise.all([remove(c, d), remove(d, c)]);
    const codes = results.map((r) => r.statusCode).sort();
    // One wins; the other meets the check (409) or finds its own account gone (401).
    expect([
      [200, 401],
      [200, 409],
    ]).toContainEqual(codes);
    expect(await activeAdmins()).toBe(1);
  });
});

describe('admin panel: the same queries on the embedded PGlite', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite' });
  });
  afterAll(() => t.close());

  it('answers the summary, a page with statistics, details and both histories', async () => {
    const admin = await createUser(t.app, t.deps, { admin: true });
    const u = await createUser(t.app, t.deps);
    const { id } = await t.deps.conversations.create(u.id, { title: 'Embedded' });
    await t.deps.messages.append(u.id, id, { role: 'user', content: 'Hello' });
    const get = async <T>(url: string) =>
      dataOf<T>(await t.app.inject({ method: 'GET', url, headers: bearer(admin.access) }));
    expect(await get<Summary>(`${PANEL}/summary`)).toMatchObject({
      users: { total: 2, active: 2, admins: 1 },
      conversations: { total: 1, today: 1 },
    });
    const page = await get<Page>(`${PANEL}/users`);
    expect(
      page.items.map((i) => [i.id, i.statistics.conversations, i.statistics.messages]),
    ).toEqual([
      [u.id, 1, 1],
      [admin.id, 0, 0],
    ]);
    expect(await get(`${PANEL}/users/${u.id}`)).toMatchObject({ active_lock: false });
    const history = await get<{ items: RoleChange[]; total: number }>(
      `${PANEL}/users/${u.id}/role-history`,
    );
    expect(history.items.map((i) => i.action)).toEqual(['auth.register']);
    expect(history.total).toBe(1);
    const locks = await get(`${PANEL}/users/${u.id}/lock-reasons`);
    expect(locks).toEqual({ items: [], total: 0 });
  });
});
