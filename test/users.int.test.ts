import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, refreshTokens, users } from '../src/db/schema/index.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import {
  PASSWORD,
  bearer,
  createUser,
  dataOf,
  errorOf,
  login,
  uniqueEmail,
  type TestUser,
} from './helpers/factories.js';

describe('users (PostgreSQL + Redis)', () => {
  let t: TestApp;
  let admin: TestUser;
  beforeAll(async () => {
    t = await createTestApp();
    admin = await createUser(t.app, t.deps, { admin: true });
  });
  afterAll(() => t.close());

  const call = (
    method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    token: string,
    payload?: object,
  ) =>
    t.app.inject({
      method,
      url,
      headers: bearer(token),
      ...(payload === undefined ? {} : { payload }),
    });

  it('reads and updates the own profile; a taken email is 409 and changes nothing', async () => {
    const u = await createUser(t.app, t.deps);
    const other = await createUser(t.app, t.deps);
    expect(dataOf(await call('GET', '/api/users/me', u.access))).toMatchObject({
      id: u.id,
      email: u.email,
    });
    const newEmail = uniqueEmail('renamed');
    const updated = dataOf(
      await call('PUT', '/api/users/me', u.access, {
        full_name: 'Zoë Ünïcode 医生',
        email: ` ${newEmail} `,
      }),
    );
    expect(updated).toMatchObject({ full_name: 'Zoë Ünïcode 医生', email: newEmail });
    expect(
      errorOf(
        await call('PUT', '/api/users/me', u.access, {
          email: other.email.toUpperCase(),
          full_name: 'Nope',
        }),
        409,
      ).code,
    ).toBe('CONFLICT');
    expect(dataOf(await call('GET', '/api/users/me', u.access))).toMatchObject({
      full_name: 'Zoë Ünïcode 医生',
      email: newEmail,
    });
    expect((await login(t.app, newEmail)).statusCode).toBe(200);
  });

  it('changes the password, ends every session, and the new one works at once', async () => {
    const u = await createUser(t.app, t.deps);
    const second = dataOf<{ access_token: string; refresh_token: string }>(
      await login(t.app, u.email),
    );
    const wrong = errorOf(
      await call('POST', '/api/users/me/change-password', u.access, {
        old_password: 'not it at all',
        new_password: 'a brand new passphrase',
      }),
      422,
    );
    expect(wrong.details).toEqual([
      { field: 'body.old_password', message: 'is not the current password' },
    ]);
    const same = errorOf(
      await call('POST', '/api/users/me/change-password', u.access, {
        old_password: PASSWORD,
        new_password: PASSWORD,
      }),
      422,
    );
    expect(JSON.stringify(same.details)).toContain('must differ');
    const res = await call('POST', '/api/users/me/change-password', u.access, {
      old_password: PASSWORD,
      new_password: 'a brand new passphrase',
    });
    expect(dataOf(res)).toEqual({ message: expect.any(String) });
    for (const token of [u.access, second.access_token])
      errorOf(await call('GET', '/api/users/me', token), 401);
    const refreshed = await t.app.inject({
      method: 'POST',
      url: '/api/auth/refresh',
      payload: { refresh_token: second.refresh_token },
    });
    errorOf(refreshed, 401);
    errorOf(await login(t.app, u.email), 401);
    expect((await login(t.app, u.email, 'a brand new passphrase')).statusCode).toBe(200);
  });

  it('refuses a common new password whatever its case (password123 is on the ranked list)', async () => {
    const u = await createUser(t.app, t.deps);
    for (const newPassword of ['password123', 'Password123']) {
      const err = errorOf(
        await call('POST', '/api/users/me/change-password', u.access, {
          old_password: PASSWORD,
          new_password: newPassword,
        }),
        422,
      );
      expect(err.details).toEqual([
        { field: 'body.new_password', message: 'is too common; choose a less guessable password' },
      ]);
    }
    expect((await login(t.app, u.email)).statusCode).toBe(200);
  });

  it('deletes the own account with everything it owns; the audit keeps the id, not the email', async () => {
    const u = await createUser(t.app, t.deps);
    const db = t.deps.database.db;
    expect(dataOf(await call('DELETE', '/api/users/me', u.access))).toEqual({
      message: 'Account deleted',
    });
    errorOf(await call('GET', '/api/users/me', u.access), 401);
    const left = await db
      .select()
      .from(users)
      .where(sql`${users.id} = ${u.id}`);
    const tokens = await db
      .select()
      .from(refreshTokens)
      .where(sql`${refreshTokens.userId} = ${u.id}`);
    expect(left).toHaveLength(0);
    expect(tokens).toHaveLength(0);
    const entries = await db
      .select()
      .from(auditLogs)
      .where(sql`${auditLogs.actorId} = ${u.id}`);
    expect(entries.map((e) => e.action)).toEqual(
      expect.arrayContaining(['auth.register', 'auth.login', 'user.deleted']),
    );
    for (const e of entries) expect(e.actorEmail).toMatch(/^sha256:[0-9a-f]{64}$/);
    const mentions = await db
      .select()
      .from(auditLogs)
      .where(sql`lower(${auditLogs.actorEmail}) = lower(${u.email})`);
    expect(mentions.map((m) => [m.action, m.actorId])).toEqual([]);
    expect(await t.deps.audit.verify()).toMatchObject({ valid: true, broken_at: null });
    errorOf(await login(t.app, u.email), 401);
  });

  it('lists users newest first with total, offset and limit', async () => {
    const before = dataOf<{ total: number }>(
      await call('GET', '/api/users?limit=1', admin.access),
    ).total;
    const a = await createUser(t.app, t.deps);
    const b = await createUser(t.app, t.deps);
    const page = dataOf<{ items: { id: string }[]; total: number; offset: number; limit: number }>(
      await call('GET', '/api/users?offset=0&limit=2', admin.access),
    );
    expect(page).toMatchObject({ total: before + 2, offset: 0, limit: 2 });
    expect(page.items.map((i) => i.id)).toEqual([b.id, a.id]);
    const next = dataOf<{ items: { id: string }[] }>(
      await call('GET', '/api/users?offset=1&limit=1', admin.access),
    );
    expect(next.items.map((i) => i.id)).toEqual([a.id]);
    const defaults = dataOf<{ offset: number; limit: number }>(
      await call('GET', '/api/users', admin.access),
    );
    expect(defaults).toMatchObject({ offset: 0, limit: 20 });
  });

  it('deactivates (ending sessions within a second), activates, promotes and demotes', async () => {
    const u = await createUser(t.app, t.deps);
    const deactivated = dataOf(await call('PUT', `/api/users/${u.id}/deactivate`, admin.access));
    expect(deactivated).toMatchObject({ is_active: false });
    expect(errorOf(await call('GET', '/api/users/me', u.access), 401).code).toBe('UNAUTHORIZED');
    expect(dataOf(await call('PUT', `/api/users/${u.id}/deactivate`, admin.access))).toMatchObject({
      is_active: false,
    });
    expect(dataOf(await call('PUT', `/api/users/${u.id}/activate`, admin.access))).toMatchObject({
      is_active: true,
    });
    const relogged = dataOf<{ access_token: string }>(await login(t.app, u.email));
    expect(
      dataOf(await call('PUT', `/api/users/${u.id}/promote-admin`, admin.access)),
    ).toMatchObject({ is_admin: true, admin_role: 'admin' });
    expect((await call('GET', '/api/users', relogged.access_token)).statusCode).toBe(200);
    expect(
      dataOf(await call('PUT', `/api/users/${u.id}/revoke-admin`, admin.access)),
    ).toMatchObject({ is_admin: false, admin_role: 'user' });
    errorOf(await call('GET', '/api/users', relogged.access_token), 403);
  });

  it('refuses to let an administrator remove their own rights (409), changing nothing', async () => {
    for (const url of [
      `/api/users/${admin.id}/deactivate`,
      `/api/users/${admin.id}/revoke-admin`,
    ]) {
      expect(errorOf(await call('PUT', url, admin.access), 409).code).toBe('CONFLICT');
    }
    errorOf(await call('PATCH', `/api/users/${admin.id}`, admin.access, { is_active: false }), 409);
    errorOf(
      await call('PATCH', `/api/users/${admin.id}`, admin.access, { admin_role: 'user' }),
      409,
    );
    errorOf(await call('DELETE', '/api/users/me', admin.access), 409);
    expect(dataOf(await call('GET', '/api/users/me', admin.access))).toMatchObject({
      is_active: true,
      is_admin: true,
    });
  });

  it('patches several fields in one transaction and audits each change', async () => {
    const u = await createUser(t.app, t.deps);
    const email = uniqueEmail('patched');
    const patched = dataOf(
      await call('PATCH', `/api/users/${u.id}`, admin.access, {
        full_name: 'Patched',
        email,
        is_active: false,
        admin_role: 'admin',
      }),
    );
    expect(patched).toMatchObject({
      full_name: 'Patched',
      email,
      is_active: false,
      admin_role: 'admin',
    });
    const rows = await t.deps.database.db
      .select()
      .from(auditLogs)
      .where(sql`${auditLogs.resourceId} = ${u.id} and ${auditLogs.actorId} = ${admin.id}`);
    expect(rows.map((r) => r.action).sort()).toEqual([
      'user.deactivated',
      'user.promoted',
      'user.updated',
    ]);
    expect(rows.find((r) => r.action === 'user.updated')?.details).toEqual({
      fields: ['full_name', 'email'],
    });
  });

  it('rolls back a patch whose email is taken', async () => {
    const u = await createUser(t.app, t.deps);
    const other = await createUser(t.app, t.deps);
    errorOf(
      await call('PATCH', `/api/users/${u.id}`, admin.access, {
        full_name: 'Should not stick',
        email: other.email,
        is_active: false,
      }),
      409,
    );
    expect(dataOf(await call('GET', `/api/users/${u.id}`, admin.access))).toMatchObject({
      full_name: 'Test User',
      email: u.email,
      is_active: true,
    });
  });

  it('answers 404 for an unknown user and 422 for a malformed id', async () => {
    const unknown = '7d1f2b9e-9f7a-4c56-8a3e-2b1c0d9e8f7a';
    for (const [method, url] of [
      ['GET', `/api/users/${unknown}`],
      ['PUT', `/api/users/${unknown}/activate`],
    ] as const) {
      expect(errorOf(await call(method, url, admin.access), 404).code).toBe('NOT_FOUND');
    }
    const bad = errorOf(await call('GET', '/api/users/not-a-uuid', admin.access), 422);
    expect(bad.details).toEqual([{ field: 'params.user_id', message: 'must match format "uuid"' }]);
  });

  it('trims full_name on update as on register', async () => {
    const u = await createUser(t.app, t.deps);
    const updated = dataOf(
      await call('PUT', '/api/users/me', u.access, { full_name: '  Ada Admin  ' }),
    );
    expect(updated).toMatchObject({ full_name: 'Ada Admin' });
  });
});

describe('the last administrator', () => {
  it('survives two administrators demoting each other at the same moment', async () => {
    const t = await createTestApp();
    try {
      const a = await createUser(t.app, t.deps, { admin: true });
      const b = await createUser(t.app, t.deps, { admin: true });
      const demote = (caller: TestUser, target: TestUser) =>
        t.app.inject({
          method: 'PUT',
          url: `/api/users/${target.id}/revoke-admin`,
          headers: bearer(caller.access),
        });
      const results = await Promise.all([demote(a, b), demote(b, a)]);
      // One wins. The other is refused: 409 when it reached the check, or 403 when the winner's
      // demotion landed before its own token was checked. Never two 200s.
      const codes = results.map((r) => r.statusCode).sort();
      expect([
        [200, 403],
        [200, 409],
      ]).toContainEqual(codes);
      const loser = results.find((r) => r.statusCode !== 200)!;
      if (loser.statusCode === 409) {
        expect(errorOf(loser, 409).message).toMatch(/without an active administrator/);
      }
      const admins = await t.deps.users.page(0, 10);
      expect(admins.rows.filter((r) => r.adminRole === 'admin' && r.isActive)).toHaveLength(1);
    } finally {
      await t.close();
    }
  });
});
