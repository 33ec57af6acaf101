import { randomBytes } from 'node:crypto';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { TokenSigner } from '../src/modules/auth/tokens.js';
import { createLogger } from '../src/platform/logger.js';
import { TEST_JWT_SECRET, createTestApp, deleteRedisPrefix, type TestApp } from './helpers/app.js';
import { openTestDatabase } from './helpers/db.js';
import { PASSWORD, bearer, errorOf, login, register, uniqueEmail } from './helpers/factories.js';
import { REDIS_URL } from './helpers/env.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ROLES = ['nextcloud', 'postgres', 'qdrant', 'redis'];

describe('health, readiness and metrics (PostgreSQL + Redis)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('GET /health is a bare liveness object', async () => {
    const before = Date.now() / 1000;
    const res = await t.app.inject({ method: 'GET', url: '/health' });
    const after = Date.now() / 1000;
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json<Record<string, unknown>>();
    expect(Object.keys(body).sort()).toEqual(['status', 'timestamp', 'version']);
    expect(body.status).toBe('ok');
    expect(body.version).toMatch(/^2\.0\.\d+$/);
    expect(typeof body.timestamp).toBe('number');
    const ts = body.timestamp as number;
    // Unix seconds (not milliseconds), with the fraction kept.
    expect(ts).toBeGreaterThanOrEqual(before - 1);
    expect(ts).toBeLessThanOrEqual(after + 1);
    expect(body).not.toHaveProperty('success');
  });

  it('keeps the fraction of a second in the timestamp', async () => {
    const stamps = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/health' });
      stamps.push(res.json<{ timestamp: number }>().timestamp);
      await new Promise((r) => setTimeout(r, 3));
    }
    expect(stamps.some((s) => !Number.isInteger(s))).toBe(true);
  });

  it('GET /ready answers 200 with every check true and the backends named', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ready' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{
      status: string;
      checks: Record<string, boolean>;
      backends: Record<string, string>;
      timestamp: number;
    }>();
    expect(body.status).toBe('ready');
    expect(body.checks).toEqual({ postgres: true, redis: true, qdrant: true, nextcloud: true });
    expect(Object.keys(body.backends).sort()).toEqual(ROLES);
    expect(body.backends.postgres).toBe('postgresql');
    expect(body.backends.redis).toBe('redis');
    for (const name of Object.values(body.backends)) expect(name).toMatch(/\S/);
    expect(typeof body.timestamp).toBe('number');
    expect(Math.abs(body.timestamp - Date.now() / 1000)).toBeLessThan(60);
  });

  it('GET /metrics is Prometheus text with every documented family', async () => {
    await t.app.inject({ method: 'GET', url: '/health' });
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const text = res.body;
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/health",status="200"\} \d+/m);
    for (const family of [
      'http_request_duration_seconds',
      'ws_connections',
      'chat_first_chunk_seconds',
      'llm_tokens_total',
      'voice_stage_seconds',
      'kb_jobs_total',
      'cache_requests_total',
      'circuit_breaker_state',
      'process_cpu_user_seconds_total',
    ]) {
      expect(text).toMatch(new RegExp(`^# TYPE ${family} `, 'm'));
    }
    expect(text).toMatch(/^# TYPE http_request_duration_seconds histogram$/m);
    expect(text).toMatch(
      /^http_request_duration_seconds_bucket\{le="[^"]+",method="GET",route="\/health"\} \d+/m,
    );
    // The /metrics answer itself is not an envelope.
    expect(text).not.toContain('"success"');
  });

  it('counts requests by route template, not by raw URL', async () => {
    await t.app.inject({ method: 'GET', url: '/no/such/route/42' });
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).not.toContain('/no/such/route/42');
    expect(text).toMatch(/http_requests_total\{method="GET",route="[^"]*",status="404"\}/);
  });

  describe('X-Request-ID', () => {
    const health = (id?: string) =>
      t.app.inject({
        method: 'GET',
        url: '/health',
        headers: id === undefined ? {} : { 'x-request-id': id },
      });

    it('echoes a sane client id', async () => {
      const res = await health('client-abc_123.4:5');
      expect(res.headers['x-request-id']).toBe('client-abc_123.4:5');
    });

    it('echoes it in the envelope of an API answer too', async () => {
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/auth/me',
        headers: { 'x-request-id': 'trace-0001' },
      });
      expect(res.statusCode).toBe(401);
      expect(res.headers['x-request-id']).toBe('trace-0001');
      expect(res.json<{ meta: { request_id: string } }>().meta.request_id).toBe('trace-0001');
    });

    it('makes up a UUID when the client sends none', async () => {
      const res = await health();
      expect(res.headers['x-request-id']).toMatch(UUID);
    });

    it.each([
      ['spaces', 'has some spaces'],
      ['500 characters', 'a'.repeat(500)],
      ['a newline escape', 'abc%0d%0aSet-Cookie:x'],
      ['quotes', '"><script>'],
    ])('replaces an id with %s by a UUID', async (_kind, id) => {
      const res = await health(id);
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(res.headers['x-request-id']).not.toBe(id);
    });

    it('gives two requests without an id two different ids', async () => {
      const [a, b] = await Promise.all([health(), health()]);
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    });
  });
});

describe('start-up with Redis', () => {
  it('has Redis connected by the time the dependencies are built', async () => {
    const { database } = await openTestDatabase('pglite');
    const dataDir = await mkdtemp(path.join(tmpdir(), 'mas-health-'));
    const prefix = `test:${randomBytes(6).toString('hex')}:`;
    const config = loadConfig({
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      REDIS_URL,
      REDIS_PREFIX: prefix,
      JWT_SECRET: 'x'.repeat(40),
    });
    const deps = await createDeps(config, createLogger({ logLevel: 'silent' }), { database });
    try {
      // No waiting: the very first commands must reach Redis, not fail for want of a connection.
      await expect(deps.kv.ping()).resolves.toBeUndefined();
      await expect(deps.kv.increment('probe', 60_000)).resolves.toBe(1);
      expect((await deps.health.readiness()).checks.redis).toBe(true);
    } finally {
      await deps.close(); // closes the database too
      await deleteRedisPrefix(prefix);
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('health and readiness (embedded PGlite)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite' });
  });
  afterAll(() => t.close());

  it('GET /ready answers 200 and names the embedded implementations', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ready' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ checks: Record<string, boolean>; backends: Record<string, string> }>();
    expect(body.checks).toEqual({ postgres: true, redis: true, qdrant: true, nextcloud: true });
    expect(Object.keys(body.backends).sort()).toEqual(ROLES);
    expect(body.backends.postgres).toBe('pglite');
    expect(body.backends.redis).toBe('in-process');
  });

  it('GET /health works the same', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok', version: expect.stringMatching(/^2\.0\./) });
  });

  it('GET /ready answers 503 once the database is gone, and HEAD /ready too', async () => {
    await t.deps.database.close();
    const res = await t.app.inject({ method: 'GET', url: '/ready' });
    expect(res.statusCode).toBe(503);
    const body = res.json<{ status: string; checks: Record<string, boolean> }>();
    expect(body.status).toBe('not_ready');
    expect(body.checks.postgres).toBe(false);
    expect(body.checks.redis).toBe(true);
    const head = await t.app.inject({ method: 'HEAD', url: '/ready' });
    expect(head.statusCode).toBe(503);
    expect(head.body).toBe('');
  });
});

describe('HEAD probes, as load balancers send them', () => {
  let t: TestApp;
  let port: number;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite', env: { RATE_LIMIT_HEALTH_PER_MINUTE: '6' } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    port = typeof address === 'object' && address !== null ? address.port : 0;
  });
  afterAll(async () => {
    agent.destroy();
    await t.close();
  });

  /** One request on the shared keep-alive connection: status, headers and the bytes of the body. */
  const send = (method: string, path: string) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>(
      (resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, method, path, agent }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
          });
        });
        req.on('error', reject);
        req.end();
      },
    );

  it('answers HEAD like GET, without a body, on a connection that stays usable', async () => {
    for (const path of ['/health', '/ready']) {
      const get = await send('GET', path);
      const head = await send('HEAD', path);
      expect(head.status).toBe(get.status);
      expect(head.body).toBe('');
      expect(head.headers['content-type']).toBe(get.headers['content-type']);
      // The length GET's body would have, but for the timestamp (seconds, to the millisecond):
      // "1795900000.125" and "1795900000" (a whole second, about one answer in a thousand)
      // differ by four characters.
      const length = (answer: { headers: IncomingHttpHeaders }) =>
        Number(answer.headers['content-length']);
      expect(Math.abs(length(head) - length(get))).toBeLessThanOrEqual(4);
      expect(head.headers['x-request-id']).toMatch(UUID);
      expect(head.headers['x-ratelimit-limit']).toBeDefined();
    }
    expect((await send('GET', '/health')).status).toBe(200); // the connection still works
  });

  it('counts HEAD and GET against the same probe limit', async () => {
    // Whatever the test above used, each HEAD and each GET takes one from the same six.
    let remaining = Number((await send('HEAD', '/health')).headers['x-ratelimit-remaining']);
    expect(remaining).toBeLessThan(6);
    for (let i = 0; remaining > 0; i += 1) {
      const answer = await send(i % 2 === 0 ? 'GET' : 'HEAD', '/health');
      expect(Number(answer.headers['x-ratelimit-remaining'])).toBe(remaining - 1);
      remaining -= 1;
    }
    const limited = await send('GET', '/health');
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    const limitedHead = await send('HEAD', '/health');
    expect(limitedHead.status).toBe(429);
    expect(limitedHead.body).toBe('');
  });

  it('is not offered on other routes: HEAD /metrics is an unknown route', async () => {
    expect((await send('HEAD', '/metrics')).status).toBe(404);
  });
});

describe('readiness with Redis unreachable', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
  });
  afterAll(() => t.close());

  it('still starts and answers /health', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
  });

  it('registers (limits fail open) but answers logins and token checks with 503', async () => {
    const email = uniqueEmail();
    const created = await register(t.app, { email, password: PASSWORD, full_name: 'No Redis' });
    expect(created.statusCode, created.body).toBe(201);
    // Login lockout counts in Redis: without it, password checks would be unlimited (fail closed).
    expect(errorOf(await login(t.app, email), 503).code).toBe('SERVICE_UNAVAILABLE');
    // A token signed as the service signs them: revocation lives in Redis, so it cannot be checked.
    const id = created.json<{ data: { id: string } }>().data.id;
    const signer = new TokenSigner(TEST_JWT_SECRET, 900, 3600);
    const user = { access: (await signer.issuePair(id)).access_token };
    const me = await t.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: bearer(user.access),
    });
    expect(errorOf(me, 503).code).toBe('SERVICE_UNAVAILABLE');
    const out = await t.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: bearer(user.access),
    });
    expect(errorOf(out, 503).code).toBe('SERVICE_UNAVAILABLE');
  });

  it('GET /ready answers 503 with checks.redis false and the rest true', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ready' });
    expect(res.statusCode).toBe(503);
    const body = res.json<{ status: string; checks: Record<string, boolean> }>();
    expect(body.status).toBe('not_ready');
    expect(body.checks).toEqual({ postgres: true, redis: false, qdrant: true, nextcloud: true });
  });
});
