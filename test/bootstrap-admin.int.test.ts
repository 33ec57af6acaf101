import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs } from '../src/db/schema/index.js';
import { ensureAdmin } from '../src/modules/users/bootstrap.js';
import { usersRepo } from '../src/modules/users/repo.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import {
  PASSWORD,
  bearer,
  createUser,
  dataOf,
  login,
  uniqueEmail,
  type TestUser,
} from './helpers/factories.js';
import { exitWithin, freePort, spawnTsx, waitForHttp } from './helpers/process.js';

const STRONG = 'violet tractor moonlight 42';

/**
 * Issue 9: the bootstrap administrator must not hand administrator rights to whoever holds the
 * configured email. An existing account is promoted only when BOOTSTRAP_ADMIN_PASSWORD is its
 * password, and never when an administrator demoted it.
 */
describe('ensureAdmin refuses to promote an account that is not the operator’s (PostgreSQL)', () => {
  let t: TestApp;
  let admin: TestUser;
  beforeAll(async () => {
    t = await createTestApp();
    admin = await createUser(t.app, t.deps, { admin: true });
  });
  afterAll(() => t.close());

  const ensure = (email: string, password: string, source: 'bootstrap' | 'cli' = 'bootstrap') =>
    ensureAdmin(
      { db: t.deps.database.db, auth: t.deps.auth, users: t.deps.users, audit: t.deps.audit },
      email,
      password,
      source,
    );
  const roleOf = async (email: string) =>
    (await usersRepo.findByEmail(t.deps.database.db, email))?.adminRole;
  const refusals = (userId: string) =>
    t.deps.database.db
      .select()
      .from(auditLogs)
      .where(
        and(
          eq(auditLogs.resourceId, userId),
          eq(auditLogs.action, 'user.promoted'),
          eq(auditLogs.success, false),
        ),
      );
  const listUsers = (token: string) =>
    t.app.inject({ method: 'GET', url: '/api/users', headers: bearer(token) });

  it('does not promote an account someone registered under the bootstrap email', async () => {
    const squatter = await createUser(t.app, t.deps); // their own password, not STRONG
    expect(await ensure(squatter.email, STRONG)).toEqual({
      outcome: 'refused',
      reason: 'password_mismatch',
      userId: squatter.id,
    });
    expect(await roleOf(squatter.email)).toBe('user');
    expect((await listUsers(squatter.access)).statusCode).toBe(403);
    const entries = await refusals(squatter.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      actorId: null,
      actorEmail: null,
      resourceType: 'user',
      details: { source: 'bootstrap', reason: 'password_mismatch' },
    });
  });

  it('does not promote whoever registers the email after the administrator moved away', async () => {
    const email = uniqueEmail('root');
    expect(await ensure(email, STRONG)).toMatchObject({ outcome: 'created' });
    const root = dataOf<{ access_token: string }>(await login(t.app, email, STRONG));
    const moved = await t.app.inject({
      method: 'PUT',
      url: '/api/users/me',
      headers: bearer(root.access_token),
      payload: { email: uniqueEmail('moved') },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const squatter = await createUser(t.app, t.deps, { email });
    expect(await ensure(email, STRONG)).toMatchObject({
      outcome: 'refused',
      reason: 'password_mismatch',
    });
    expect(await roleOf(email)).toBe('user');
    expect((await listUsers(squatter.access)).statusCode).toBe(403);
  });

  it('promotes an existing account whose password is the bootstrap password', async () => {
    const user = await createUser(t.app, t.deps, { password: STRONG });
    expect(await ensure(user.email.toUpperCase(), STRONG)).toEqual({
      outcome: 'promoted',
      userId: user.id,
    });
    expect(await ensure(user.email, STRONG)).toEqual({ outcome: 'unchanged', userId: user.id });
    const fresh = dataOf<{ access_token: string }>(await login(t.app, user.email, STRONG));
    expect((await listUsers(fresh.access_token)).statusCode).toBe(200);
  });

  it('does not re-promote an administrator another administrator demoted', async () => {
    const email = uniqueEmail('root');
    const created = await ensure(email, STRONG);
    expect(created).toMatchObject({ outcome: 'created' });
    const demoted = await t.app.inject({
      method: 'PUT',
      url: `/api/users/${created.userId}/revoke-admin`,
      headers: bearer(admin.access),
    });
    expect(demoted.statusCode, demoted.body).toBe(200);
    // The next start-up, with the very same settings and the right password.
    expect(await ensure(email, STRONG)).toEqual({
      outcome: 'refused',
      reason: 'demoted',
      userId: created.userId,
    });
    expect(await roleOf(email)).toBe('user');
    expect((await refusals(created.userId))[0]?.details).toEqual({
      source: 'bootstrap',
      reason: 'demoted',
    });
    // The CLI is an operator's explicit action: with the account's password it promotes again.
    expect(await ensure(email, STRONG, 'cli')).toMatchObject({ outcome: 'promoted' });
    expect(await roleOf(email)).toBe('admin');
  });

  it('the CLI also refuses an existing account whose password differs', async () => {
    const user = await createUser(t.app, t.deps);
    expect(await ensure(user.email, STRONG, 'cli')).toMatchObject({
      outcome: 'refused',
      reason: 'password_mismatch',
    });
    expect((await refusals(user.id))[0]?.details).toEqual({
      source: 'cli',
      reason: 'password_mismatch',
    });
    expect(await roleOf(user.email)).toBe('user');
  });

  it('does not promote a deactivated account, even with its password', async () => {
    const user = await createUser(t.app, t.deps, { password: STRONG });
    const off = await t.app.inject({
      method: 'PUT',
      url: `/api/users/${user.id}/deactivate`,
      headers: bearer(admin.access),
    });
    expect(off.statusCode, off.body).toBe(200);
    expect(await ensure(user.email, STRONG)).toMatchObject({
      outcome: 'refused',
      reason: 'inactive',
    });
    expect(await roleOf(user.email)).toBe('user');
  });

  it('two instances starting at once on an empty database: one creates, the other finds it', async () => {
    const email = uniqueEmail('root');
    const results = await Promise.all([ensure(email, STRONG), ensure(email, STRONG)]);
    expect(results.map((r) => r.outcome).sort()).toEqual(['created', 'unchanged']);
    expect(await roleOf(email)).toBe('admin');
  });

  it('keeps the audit chain valid', async () => {
    expect(await t.deps.audit.verify()).toMatchObject({ valid: true });
  });
});

describe('start-up whose BOOTSTRAP_ADMIN_EMAIL names someone else’s account', () => {
  let t: TestApp;
  let dataDir: string;
  beforeAll(async () => {
    t = await createTestApp();
    dataDir = await mkdtemp(path.join(tmpdir(), 'mas-boot-'));
  });
  afterAll(async () => {
    await t.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it(
    'keeps running, leaves the account as it was, warns and audits',
    { timeout: 90_000 },
    async () => {
      const squatter = await createUser(t.app, t.deps);
      const port = await freePort();
      const service = spawnTsx('src/main.ts', [], {
        NODE_ENV: 'development',
        DATA_DIR: dataDir,
        PORT: String(port),
        LOG_LEVEL: 'info',
        DATABASE_URL: t.deps.config.databaseUrl ?? '',
        JWT_SECRET: 'bootstrap-test-secret-that-is-long-enough-0123456789',
        BOOTSTRAP_ADMIN_EMAIL: squatter.email,
        BOOTSTRAP_ADMIN_PASSWORD: STRONG,
      });
      try {
        await waitForHttp(port, '/health', 60_000);
        const res = await fetch(`http://127.0.0.1:${port}/api/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: squatter.email, password: PASSWORD }),
        });
        const { data } = (await res.json()) as { data: { access_token: string } };
        const users = await fetch(`http://127.0.0.1:${port}/api/users`, {
          headers: bearer(data.access_token),
        });
        expect(users.status).toBe(403);
        expect(await usersRepo.findByEmail(t.deps.database.db, squatter.email)).toMatchObject({
          adminRole: 'user',
        });
        const warning = service
          .output()
          .split('\n')
          .find((line) => line.includes('bootstrap administrator not promoted'));
        expect(warning, service.output()).toBeDefined();
        expect(JSON.parse(warning ?? '{}')).toMatchObject({
          level: 40,
          reason: 'password_mismatch',
          user_id: squatter.id,
        });
        for (const secret of [squatter.email, STRONG, PASSWORD]) {
          expect(service.output()).not.toContain(secret);
        }
        const audited = await t.deps.database.db
          .select()
          .from(auditLogs)
          .where(and(eq(auditLogs.resourceId, squatter.id), eq(auditLogs.success, false)));
        expect(audited.map((a) => [a.action, a.details])).toEqual([
          ['user.promoted', { source: 'bootstrap', reason: 'password_mismatch' }],
        ]);
        service.child.kill('SIGTERM');
        expect((await exitWithin(service, 10_000))?.code).toBe(0);
      } finally {
        if (service.child.exitCode === null) service.child.kill('SIGKILL');
      }
    },
  );
});
