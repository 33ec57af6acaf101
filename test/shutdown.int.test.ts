import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { App } from '../src/platform/http/types.js';
import { createShutdown } from '../src/shutdown.js';
import { createTestApp, deleteRedisPrefix, type TestApp } from './helpers/app.js';
import { createTestDatabase } from './helpers/db.js';
import { REDIS_URL } from './helpers/env.js';
import {
  exitWithin,
  freePort,
  httpGet,
  spawnTsx,
  waitForHttp,
  type HttpAnswer,
  type Spawned,
} from './helpers/process.js';

/** A route that signals when it has started and answers after `ms`, unless cancelled. */
function slowRoute(ms: number) {
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const timers: NodeJS.Timeout[] = [];
  return {
    running,
    cancel: () => {
      timers.forEach(clearTimeout);
    },
    install: (app: App, after?: () => Promise<void>) => {
      app.get(
        '/slow',
        { config: { auth: 'none' }, schema: { operationId: 'testSlow' } },
        async () => {
          started();
          await new Promise((r) => timers.push(setTimeout(r, ms)));
          await after?.();
          return { done: true };
        },
      );
    },
  };
}

async function listen(app: App): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as AddressInfo).port;
}

/** Settles to the answer or to the error, so a failed request can be asserted on. */
const settle = (p: Promise<HttpAnswer>) =>
  p.then(
    (answer) => ({ answer, error: null }),
    (error: unknown) => ({ answer: null, error: error as NodeJS.ErrnoException }),
  );

describe('graceful shutdown (in process)', () => {
  let t: TestApp | undefined;
  let cancel: (() => void) | undefined;
  afterEach(async () => {
    cancel?.();
    await t?.close();
    t = undefined;
  });

  it('lets the in-flight request finish, refuses new connections, closes the database and Redis', async () => {
    const slow = slowRoute(500);
    cancel = slow.cancel;
    let dbWorkedAfterWait = false;
    t = await createTestApp({
      beforeReady: (app) => {
        // The request uses the database after waiting: it must still be open then.
        slow.install(app, async () => {
          await t?.deps.database.ping();
          dbWorkedAfterWait = true;
        });
      },
    });
    const { app, deps } = t;
    const port = await listen(app);
    expect((await httpGet(port, '/health')).status).toBe(200);
    expect(deps.redis?.status).toBe('ready');

    const inFlight = settle(httpGet(port, '/slow'));
    await slow.running;
    let stopped = false;
    const stopping = createShutdown(
      app,
      deps,
      10_000,
    )('test').then(() => {
      stopped = true;
    });

    // Once shutdown has begun, a new connection is not accepted.
    await new Promise((r) => setTimeout(r, 50));
    const during = await settle(httpGet(port, '/health'));
    expect(during.error?.code).toBe('ECONNREFUSED');

    const result = await inFlight;
    expect(result.error).toBeNull();
    expect(result.answer?.status).toBe(200);
    expect(JSON.parse(result.answer?.body ?? '{}')).toEqual({ done: true });
    expect(dbWorkedAfterWait).toBe(true);

    await stopping;
    expect(stopped).toBe(true);
    const after = await settle(httpGet(port, '/health'));
    expect(after.error?.code).toBe('ECONNREFUSED');
    await expect(deps.database.ping()).rejects.toThrow();
    await expect(deps.kv.ping()).rejects.toThrow();
    // QUIT has been answered; the socket's end follows a moment later.
    await vi.waitFor(() => {
      expect(deps.redis?.status).toBe('end');
    });
  });

  it('is idempotent: a second signal waits for the same shutdown', async () => {
    t = await createTestApp({ backend: 'pglite' });
    await listen(t.app);
    const shutdown = createShutdown(t.app, t.deps, 5_000);
    const first = shutdown('SIGTERM');
    const second = shutdown('SIGINT');
    expect(second).toBe(first);
    await first;
    await expect(t.deps.database.ping()).rejects.toThrow();
  });

  it('cuts a request slower than the timeout and still finishes within about the timeout', async () => {
    const slow = slowRoute(30_000);
    cancel = slow.cancel;
    t = await createTestApp({
      backend: 'pglite',
      beforeReady: (app) => {
        slow.install(app);
      },
    });
    const port = await listen(t.app);

    const inFlight = settle(httpGet(port, '/slow'));
    await slow.running;
    const started = Date.now();
    await createShutdown(t.app, t.deps, 300)('test');
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(5_000); // generous: the route alone would take 30 s

    const result = await inFlight;
    expect(result.answer).toBeNull();
    expect(result.error?.code).toMatch(/ECONNRESET|ECONNREFUSED|EPIPE/);
    await expect(t.deps.database.ping()).rejects.toThrow();
  });
});

describe('the real service stops on SIGTERM', { timeout: 90_000 }, () => {
  let dataDir: string | undefined;
  let service: Spawned | undefined;
  afterEach(async () => {
    if (service?.child.exitCode === null) service.child.kill('SIGKILL');
    service = undefined;
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
    dataDir = undefined;
  });

  /** `npm run dev` (the embedded defaults unless `env` says otherwise), once it answers /health. */
  async function startService(env: Record<string, string> = {}) {
    dataDir = await mkdtemp(path.join(tmpdir(), 'mas-shutdown-'));
    const port = await freePort();
    service = spawnTsx('src/main.ts', [], {
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'info',
      NODE_ENV: 'development',
      ...env,
    });
    const health = await waitForHttp(port, '/health', 60_000);
    expect(JSON.parse(health.body)).toMatchObject({ status: 'ok' });
    return { service, port };
  }

  /** Sends SIGTERM and waits at most `ms` for the exit; null when it did not exit. */
  async function terminate(s: Spawned, ms: number) {
    s.child.kill('SIGTERM');
    return exitWithin(s, ms);
  }

  it('exits 0 within a few seconds and logs that it stopped', async () => {
    const { service: s, port } = await startService();
    expect((await httpGet(port, '/ready')).status).toBe(200);

    const exit = await terminate(s, 10_000);
    expect(exit, s.output()).toEqual({ code: 0, signal: null });

    const lines = s
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg?: string; reason?: string });
    expect(lines.some((l) => l.msg === 'shutting down' && l.reason === 'SIGTERM')).toBe(true);
    expect(lines.at(-1)?.msg).toBe('stopped');
    await expect(httpGet(port, '/health')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('exits 0 just as promptly on PostgreSQL and Redis', async () => {
    const db = await createTestDatabase();
    const redisPrefix = `test:${randomBytes(6).toString('hex')}:`;
    try {
      const { service: s } = await startService({
        DATABASE_URL: db.url,
        REDIS_URL,
        REDIS_PREFIX: redisPrefix,
        JWT_SECRET: 'x'.repeat(40),
      });
      expect(s.output()).toMatch(/"database":"postgres","store":"redis"/);
      const exit = await terminate(s, 10_000);
      expect(exit, s.output()).toEqual({ code: 0, signal: null });
      expect(s.output()).toMatch(/"msg":"stopped"\}\s*$/);
    } finally {
      if (service?.child.exitCode === null) service.child.kill('SIGKILL');
      await db.drop();
      await deleteRedisPrefix(redisPrefix);
    }
  });

  it('still exits when whoever read its log output has gone away', async () => {
    const { service: s } = await startService();
    // The log reader disappears (a crashed collector, a closed terminal): writes now fail.
    s.child.stdout?.destroy();
    s.child.stderr?.destroy();
    const exit = await terminate(s, 10_000);
    expect(exit).toEqual({ code: 0, signal: null });
  });
});
