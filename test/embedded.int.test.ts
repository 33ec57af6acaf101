import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps, type Deps } from '../src/deps.js';
import type { App } from '../src/platform/http/types.js';
import { createLogger } from '../src/platform/logger.js';
import {
  PASSWORD,
  bearer,
  dataOf,
  errorOf,
  login,
  register,
  uniqueEmail,
} from './helpers/factories.js';

interface Running {
  app: App;
  deps: Deps;
  stop(): Promise<void>;
}

/**
 * The service as `npm run dev` starts it with nothing configured but DATA_DIR: PGlite on disk,
 * in-process stores, a generated signing secret.
 */
async function start(dataDir: string): Promise<Running> {
  const config = loadConfig({ NODE_ENV: 'development', LOG_LEVEL: 'silent', DATA_DIR: dataDir });
  expect(config.databaseUrl).toBeUndefined();
  expect(config.redisUrl).toBeUndefined();
  expect(config.jwtSecret).toBeUndefined();
  const deps = await createDeps(config, createLogger(config));
  const { app } = await buildApp(deps);
  await app.ready();
  return {
    app,
    deps,
    stop: async () => {
      await app.close();
      await deps.close();
    },
  };
}

interface Pair {
  access_token: string;
  refresh_token: string;
}

describe('embedded defaults survive a restart', () => {
  let dataDir: string;
  let running: Running | undefined;
  const email = uniqueEmail('embedded');
  let userId: string;
  let kept: Pair;
  let loggedOut: Pair;
  let secret: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'mas-embedded-'));
  });
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('first start: PGlite on disk, in-process store, a generated secret kept with mode 0600', async () => {
    running = await start(dataDir);
    const { app, deps } = running;
    expect(deps.database.kind).toBe('pglite');
    expect(deps.kv.kind).toBe('memory');
    expect(deps.redis).toBeUndefined();

    const file = path.join(dataDir, 'jwt-secret');
    const info = await stat(file);
    expect(info.isFile()).toBe(true);
    expect(info.mode & 0o777).toBe(0o600);
    secret = (await readFile(file, 'utf8')).trim();
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect((await stat(path.join(dataDir, 'pglite'))).isDirectory()).toBe(true);

    const registered = await register(app, { email, password: PASSWORD, full_name: 'Em Bedded' });
    expect(registered.statusCode, registered.body).toBe(201);
    userId = dataOf<{ id: string }>(registered).id;
    kept = dataOf<Pair>(await login(app, email));
    loggedOut = dataOf<Pair>(await login(app, email));
    const out = await app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: bearer(loggedOut.access_token),
    });
    expect(out.statusCode, out.body).toBeLessThan(300);
    errorOf(
      await app.inject({
        method: 'GET',
        url: '/api/auth/me',
        headers: bearer(loggedOut.access_token),
      }),
      401,
    );
    expect((await app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
  });

  it('second start on the same DATA_DIR: same secret, the user and their tokens are still there', async () => {
    running = await start(dataDir);
    const { app } = running;
    expect((await readFile(path.join(dataDir, 'jwt-secret'), 'utf8')).trim()).toBe(secret);

    const me = await app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: bearer(kept.access_token),
    });
    expect(dataOf<{ id: string; email: string }>(me)).toMatchObject({ id: userId, email });

    const relogin = await login(app, email);
    expect(relogin.statusCode, relogin.body).toBe(200);

    const refreshed = await app.inject({
      method: 'POST',
      url: '/api/auth/refresh',
      payload: { refresh_token: kept.refresh_token },
    });
    expect(refreshed.statusCode, refreshed.body).toBe(200);

    const dup = await register(app, { email, password: PASSWORD, full_name: 'Again' });
    expect(errorOf(dup, 409).code).toBe('CONFLICT');
  });

  it('second start: tokens revoked before the restart stay revoked', async () => {
    running = await start(dataDir);
    const { app } = running;
    const me = await app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: bearer(loggedOut.access_token),
    });
    errorOf(me, 401);
    const refreshed = await app.inject({
      method: 'POST',
      url: '/api/auth/refresh',
      payload: { refresh_token: loggedOut.refresh_token },
    });
    errorOf(refreshed, 401);
  });

  it('the audit chain written across restarts verifies', async () => {
    running = await start(dataDir);
    const result = await running.deps.audit.verify();
    expect(result).toMatchObject({ valid: true, broken_at: null });
    // register, two logins, logout, a login and a refresh at least
    expect(result.checked).toBeGreaterThanOrEqual(5);
  });
});
