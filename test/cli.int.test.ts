import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureAdmin } from '../src/modules/users/bootstrap.js';
import { usersRepo } from '../src/modules/users/repo.js';
import { verifyPassword } from '../src/modules/auth/password.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { PASSWORD, bearer, createUser, dataOf, login, uniqueEmail } from './helpers/factories.js';
import { exitWithin, freePort, runTsx, spawnTsx, waitForHttp } from './helpers/process.js';

const ADMIN_CLI = 'src/cli/admin.ts';
const STRONG = 'violet tractor moonlight 42';

interface Me {
  id: string;
  email: string;
  admin_role: string;
  is_admin: boolean;
}

describe('admin CLI (`npm run admin -- create`) against PostgreSQL', { timeout: 60_000 }, () => {
  let t: TestApp;
  let dataDir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp();
    dataDir = await mkdtemp(path.join(tmpdir(), 'mas-cli-'));
    env = {
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      DATABASE_URL: t.deps.config.databaseUrl ?? '',
      JWT_SECRET: 'cli-test-secret-that-is-long-enough-0123456789',
    };
  });
  afterAll(async () => {
    await t.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => runTsx(ADMIN_CLI, args, env);
  const meOf = async (email: string, password: string) => {
    const res = await login(t.app, email, password);
    const { access_token } = dataOf<{ access_token: string }>(res);
    return dataOf<Me>(
      await t.app.inject({ method: 'GET', url: '/api/auth/me', headers: bearer(access_token) }),
    );
  };

  it('creates an administrator who can log in; a second run leaves it unchanged', async () => {
    const email = uniqueEmail('root');
    const first = await cli('create', '--email', email, '--password', STRONG);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/created/);
    expect(first.stdout).toContain(email);
    expect(first.stdout).not.toContain(STRONG);

    const me = await meOf(email, STRONG);
    expect(me).toMatchObject({ email, admin_role: 'admin', is_admin: true });

    const again = await cli('create', '--email', email, '--password', STRONG);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/unchanged/);
    expect((await meOf(email, STRONG)).id).toBe(me.id);
  });

  it('promotes an existing ordinary user when the password given is theirs', async () => {
    const user = await createUser(t.app, t.deps);
    expect((await meOf(user.email, PASSWORD)).admin_role).toBe('user');

    const res = await cli('create', '--email', user.email.toUpperCase(), '--password', PASSWORD);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/promoted/);

    const row = await usersRepo.findByEmail(t.deps.database.db, user.email);
    expect(row?.adminRole).toBe('admin');
    expect(await verifyPassword(row?.passwordHash ?? '', PASSWORD)).toBe(true);
    expect(await meOf(user.email, PASSWORD)).toMatchObject({ admin_role: 'admin', is_admin: true });
  });

  it('refuses to promote an existing account with another password (exit 1)', async () => {
    const user = await createUser(t.app, t.deps);
    const res = await cli('create', '--email', user.email, '--password', STRONG);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/not promoted: .*not its password/);
    expect(res.stderr).not.toContain(STRONG);
    expect(await meOf(user.email, PASSWORD)).toMatchObject({ admin_role: 'user', is_admin: false });
  });

  it('refuses a common password with exit code 1 and a clear message', async () => {
    const email = uniqueEmail('weak');
    const res = await cli('create', '--email', email, '--password', 'password1');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/password/i);
    expect(res.stderr).toMatch(/common/i);
    expect(res.stdout).toBe('');
    expect(await usersRepo.findByEmail(t.deps.database.db, email)).toBeUndefined();
  });

  it('refuses an address that is not an email with exit code 1', async () => {
    const res = await cli('create', '--email', 'not-an-email', '--password', STRONG);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/email/i);
    expect(await usersRepo.findByEmail(t.deps.database.db, 'not-an-email')).toBeUndefined();
  });

  it.each([
    ['no arguments', []],
    ['an unknown command', ['delete', '--email', 'a@example.test', '--password', STRONG]],
    ['no password', ['create', '--email', 'a@example.test']],
    ['no email', ['create', '--password', STRONG]],
    ['a misspelt option', ['create', '--emial', 'a@example.test', '--password', STRONG]],
    ['an option without its value', ['create', '--email', 'a@example.test', '--password']],
  ])('answers %s with the usage and exit code 2', async (_case, args) => {
    const res = await cli(...args);
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toMatch(/usage: .*create --email .* --password/);
  });

  it('reports a bad configuration with exit code 1, naming the key', async () => {
    const res = await runTsx(
      ADMIN_CLI,
      ['create', '--email', uniqueEmail(), '--password', STRONG],
      { ...env, DATABASE_URL: 'mysql://nowhere' },
    );
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('DATABASE_URL');
  });
});

describe('ensureAdmin (the bootstrap administrator)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite' });
  });
  afterAll(() => t.close());

  const ensure = (email: string, password: string) =>
    ensureAdmin(
      { db: t.deps.database.db, auth: t.deps.auth, users: t.deps.users, audit: t.deps.audit },
      email,
      password,
      'bootstrap',
    );

  it('creates, then is idempotent', async () => {
    const email = uniqueEmail('boot');
    expect((await ensure(`  ${email} `, STRONG)).outcome).toBe('created');
    expect((await ensure(email, STRONG)).outcome).toBe('unchanged');
    // An administrator already: nothing to change, whatever the password.
    expect((await ensure(email.toUpperCase(), 'a different long password')).outcome).toBe(
      'unchanged',
    );
    const row = await usersRepo.findByEmail(t.deps.database.db, email);
    expect(row).toMatchObject({ email, adminRole: 'admin', isActive: true });
    expect((await login(t.app, email, STRONG)).statusCode).toBe(200);
  });

  it('promotes an existing user given their password; their tokens then carry admin rights', async () => {
    const user = await createUser(t.app, t.deps);
    const forbidden = await t.app.inject({
      method: 'GET',
      url: '/api/users',
      headers: bearer(user.access),
    });
    expect(forbidden.statusCode).toBe(403);
    expect((await ensure(user.email, PASSWORD)).outcome).toBe('promoted');
    expect((await ensure(user.email, PASSWORD)).outcome).toBe('unchanged');
    const fresh = dataOf<{ access_token: string }>(await login(t.app, user.email));
    const listed = await t.app.inject({
      method: 'GET',
      url: '/api/users',
      headers: bearer(fresh.access_token),
    });
    expect(listed.statusCode, listed.body).toBe(200);
  });

  it('refuses a common password without creating anyone', async () => {
    const email = uniqueEmail('boot');
    await expect(ensure(email, 'password1')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await usersRepo.findByEmail(t.deps.database.db, email)).toBeUndefined();
  });

  it('refuses an address that is not an email', async () => {
    await expect(ensure('root', STRONG)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await usersRepo.findByEmail(t.deps.database.db, 'root')).toBeUndefined();
  });

  it('keeps the audit chain valid', async () => {
    expect(await t.deps.audit.verify()).toMatchObject({ valid: true });
  });
});

describe('start-up with BOOTSTRAP_ADMIN_EMAIL/PASSWORD (the real service)', () => {
  let dataDir: string | undefined;
  afterEach(async () => {
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
    dataDir = undefined;
  });

  /** The real service on a fresh embedded DATA_DIR, with a bootstrap administrator configured. */
  async function startWithBootstrap(password: string) {
    dataDir = await mkdtemp(path.join(tmpdir(), 'mas-boot-'));
    const port = await freePort();
    const service = spawnTsx('src/main.ts', [], {
      NODE_ENV: 'development',
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'info',
      BOOTSTRAP_ADMIN_EMAIL: 'root@example.test',
      BOOTSTRAP_ADMIN_PASSWORD: password,
    });
    return { service, port };
  }

  it('refuses to start with a common bootstrap password', { timeout: 90_000 }, async () => {
    const { service } = await startWithBootstrap('password1');
    try {
      const exit = await exitWithin(service, 60_000);
      expect(exit?.code, service.output()).toBe(1);
      expect(service.output()).toMatch(/BOOTSTRAP_ADMIN_PASSWORD/);
      expect(service.output()).toMatch(/common/);
      expect(service.output()).not.toContain('password1');
      expect(service.output()).not.toMatch(/listening on/);
    } finally {
      if (service.child.exitCode === null) service.child.kill('SIGKILL');
    }
  });

  it('creates the administrator at start-up', { timeout: 90_000 }, async () => {
    const { service, port } = await startWithBootstrap(STRONG);
    try {
      await waitForHttp(port, '/health', 60_000);
      const res = await fetch(`http://127.0.0.1:${port}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'root@example.test', password: STRONG }),
      });
      expect(res.status).toBe(200);
      const { data } = (await res.json()) as { data: { access_token: string } };
      const me = await fetch(`http://127.0.0.1:${port}/api/auth/me`, {
        headers: bearer(data.access_token),
      });
      const body = (await me.json()) as { data: Me };
      expect(body.data).toMatchObject({ email: 'root@example.test', is_admin: true });
      expect(service.output()).toMatch(/bootstrap administrator checked/);
      expect(service.output()).not.toContain(STRONG);
      service.child.kill('SIGTERM');
      expect((await exitWithin(service, 10_000))?.code).toBe(0);
    } finally {
      if (service.child.exitCode === null) service.child.kill('SIGKILL');
    }
  });
});
