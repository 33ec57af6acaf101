import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs } from '../src/db/schema/index.js';
import { usersRepo } from '../src/modules/users/repo.js';
import type { App } from '../src/platform/http/types.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import type { Backend } from './helpers/db.js';
import { PASSWORD, bearer, createUser, errorOf, login, uniqueEmail } from './helpers/factories.js';

const NEW_PASSWORD = 'a brand new passphrase';

const statuses = (results: { statusCode: number }[]) => {
  const by: Record<number, number> = {};
  for (const r of results) by[r.statusCode] = (by[r.statusCode] ?? 0) + 1;
  return by;
};

const changePassword = (app: App, token: string, oldPassword: string, newPassword = NEW_PASSWORD) =>
  app.inject({
    method: 'POST',
    url: '/api/users/me/change-password',
    headers: bearer(token),
    payload: { old_password: oldPassword, new_password: newPassword },
  });

/**
 * Issue 9, password guessing: at most five wrong passwords are ever checked per email (login) or
 * per account (change-password) within the window, however many requests arrive at once, and an
 * unknown email locks exactly like a registered one.
 */
describe.each<Backend>(['postgres', 'pglite'])('password guessing (%s)', (backend) => {
  let t: TestApp;
  let clock = Date.now();
  beforeAll(async () => {
    t = await createTestApp({ backend, now: () => new Date(clock) });
  });
  afterAll(() => t.close());

  const auditCount = async (resourceId: string, action: string, reason?: string) => {
    const rows = await t.deps.database.db
      .select()
      .from(auditLogs)
      .where(
        and(
          eq(auditLogs.resourceId, resourceId),
          eq(auditLogs.action, action),
          reason === undefined ? sql`true` : sql`${auditLogs.details}->>'reason' = ${reason}`,
        ),
      );
    return rows.length;
  };

  it.each([20, 50])('login checks at most 5 of %i wrong passwords sent at once', async (n) => {
    const u = await createUser(t.app, t.deps);
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => login(t.app, u.email, `wrong password ${i}`)),
    );
    expect(statuses(results)).toEqual({ 401: 5, 429: n - 5 });
    expect(await auditCount(u.id, 'auth.login_failed', 'wrong_password')).toBe(5);
    expect(await auditCount(u.id, 'auth.account_locked')).toBe(1);
    expect(await usersRepo.locks(t.deps.database.db, u.id)).toHaveLength(1);
    errorOf(await login(t.app, u.email), 429); // even the right password, while locked
  });

  it('a right password under the limit still logs in, also among parallel wrong ones, and resets the count', async () => {
    const u = await createUser(t.app, t.deps);
    const mixed = await Promise.all([
      ...Array.from({ length: 4 }, () => login(t.app, u.email, 'not the password')),
      login(t.app, u.email),
    ]);
    expect(mixed.map((r) => r.statusCode)).toEqual([401, 401, 401, 401, 200]);
    for (let i = 0; i < 4; i++) errorOf(await login(t.app, u.email, 'not the password'), 401);
    expect((await login(t.app, u.email)).statusCode).toBe(200);
  });

  it('20 logins with the right password at once all succeed (a check waits its turn)', async () => {
    const u = await createUser(t.app, t.deps);
    const results = await Promise.all(Array.from({ length: 20 }, () => login(t.app, u.email)));
    expect(statuses(results)).toEqual({ 200: 20 });
  });

  it('locks an unknown email exactly like an account, so 429 tells nothing', async () => {
    const known = await createUser(t.app, t.deps);
    const unknown = uniqueEmail('nobody');
    for (let i = 0; i < 5; i++) {
      const a = errorOf(await login(t.app, known.email, 'not the password'), 401);
      // The same address however it is written: counted per normalised email.
      const spelt = i % 2 === 0 ? `  ${unknown.toUpperCase()} ` : unknown;
      expect(errorOf(await login(t.app, spelt, 'not the password'), 401)).toEqual(a);
    }
    const lockedKnown = await login(t.app, known.email, 'not the password');
    const lockedUnknown = await login(t.app, unknown, 'not the password');
    const a = errorOf(lockedKnown, 429);
    const b = errorOf(lockedUnknown, 429);
    expect({ ...b, details: null }).toEqual({ ...a, details: null });
    expect(Object.keys(b.details as object)).toEqual(['locked_until']);
    for (const res of [lockedKnown, lockedUnknown]) {
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(890);
    }
    const start = clock;
    try {
      clock = start + 15 * 60_000 + 1000;
      errorOf(await login(t.app, unknown, 'not the password'), 401); // the lock has ended
      expect((await login(t.app, known.email)).statusCode).toBe(200);
    } finally {
      clock = start;
    }
  });

  it('change-password: a wrong old_password stays 422 until the fifth, then 429 for 15 minutes', async () => {
    const u = await createUser(t.app, t.deps);
    for (let i = 0; i < 5; i++) {
      const err = errorOf(await changePassword(t.app, u.access, `wrong old password ${i}`), 422);
      expect(err.details).toEqual([
        { field: 'body.old_password', message: 'is not the current password' },
      ]);
    }
    const locked = await changePassword(t.app, u.access, PASSWORD); // even the right one
    const err = errorOf(locked, 429);
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.details).toEqual({ locked_until: expect.stringMatching(/Z$/) });
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(890);
    const [lock] = await usersRepo.locks(t.deps.database.db, u.id);
    expect(lock).toMatchObject({ failedAttempts: 5, reason: expect.stringMatching(/change/) });
    expect(await auditCount(u.id, 'user.password_change_locked')).toBe(1);
    // Login is a lock of its own: the account still signs in with its unchanged password.
    expect((await login(t.app, u.email)).statusCode).toBe(200);
    const start = clock;
    try {
      clock = start + 15 * 60_000 + 1000;
      const fresh = (await login(t.app, u.email)).json<{ data: { access_token: string } }>();
      const res = await changePassword(t.app, fresh.data.access_token, PASSWORD);
      expect(res.statusCode, res.body).toBe(200);
    } finally {
      clock = start;
    }
  });

  it('change-password checks at most 5 of 40 wrong old passwords sent at once', async () => {
    const u = await createUser(t.app, t.deps);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => changePassword(t.app, u.access, `guess number ${i}`)),
    );
    expect(statuses(results)).toEqual({ 422: 5, 429: 35 });
    expect(await auditCount(u.id, 'user.password_change_locked')).toBe(1);
  });

  it('change-password: the right old password under the limit resets the count', async () => {
    const u = await createUser(t.app, t.deps);
    for (let i = 0; i < 4; i++)
      errorOf(await changePassword(t.app, u.access, 'wrong old one'), 422);
    // Right old password, refused new one: the guessing count starts again.
    const common = errorOf(await changePassword(t.app, u.access, PASSWORD, 'password123'), 422);
    expect(common.details).toEqual([
      { field: 'body.new_password', message: 'is too common; choose a less guessable password' },
    ]);
    for (let i = 0; i < 4; i++)
      errorOf(await changePassword(t.app, u.access, 'wrong old one'), 422);
    expect((await changePassword(t.app, u.access, PASSWORD)).statusCode).toBe(200);
  });

  it('keeps the audit chain valid', async () => {
    expect(await t.deps.audit.verify()).toMatchObject({ valid: true });
  });
});

describe('password guessing while Redis is unreachable', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Nothing listens on port 1: every store call fails at once.
    t = await createTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
  });
  afterAll(() => t.close());

  it('login fails closed (503) and checks no password', async () => {
    const email = uniqueEmail();
    const registered = await t.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      payload: { email, password: PASSWORD, full_name: 'Offline' },
    });
    expect(registered.statusCode, registered.body).toBe(201);
    for (const password of [PASSWORD, 'not the password']) {
      expect(errorOf(await login(t.app, email, password), 503).code).toBe('SERVICE_UNAVAILABLE');
    }
    const failures = await t.deps.database.db
      .select()
      .from(auditLogs)
      .where(eq(auditLogs.action, 'auth.login_failed'));
    expect(failures).toHaveLength(0);
  });
});
