import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, deleteRedisPrefix, type TestApp } from './helpers/app.js';
import { createTestDatabase } from './helpers/db.js';
import { bearer, createUser, errorOf, login, type TestUser } from './helpers/factories.js';
import { sampleText, uploadNew, waitIndexed } from './helpers/knowledge.js';
import { PrivateRedis } from './helpers/redis-server.js';
import { TcpProxy } from './helpers/tcp-proxy.js';
import { ChatClient, listenLocal, newConversation } from './helpers/ws-client.js';

/**
 * Issue 22, item 10: a lost dependency answers 503 SERVICE_UNAVAILABLE with Retry-After on every
 * route and socket that needs it, and the log says once that it is down and once that it is back
 * (with the count of refused requests), instead of an error line with a stack per request.
 * PostgreSQL is taken away by cutting a proxy in front of the shared server, Redis by killing a
 * server of the test's own: the shared servers are never touched.
 */

type Line = Record<string, unknown> & { level: number; msg: string };

/** Log lines as the service writes them, kept for the test to read. */
function logCapture() {
  const lines: Line[] = [];
  return {
    lines,
    destination: {
      write: (line: string) => {
        lines.push(JSON.parse(line) as Line);
      },
    },
    since: (from: number) => lines.slice(from),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns something, at most `timeoutMs`. */
async function eventually<T>(check: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${String(timeoutMs)} ms`);
    await sleep(20);
  }
}

/** A 503 in the envelope, with the Retry-After the service documents. */
function expectUnavailable(res: {
  statusCode: number;
  body: string;
  headers: Record<string, unknown>;
}): void {
  const error = errorOf(res, 503);
  expect(error.code).toBe('SERVICE_UNAVAILABLE');
  expect(res.headers['retry-after']).toBe('5');
  expect(error.details).toBeNull();
}

/** What an outage left in the log: its one down line, its one back line, nothing per request. */
function outageLines(lines: Line[], dependency: string) {
  const down = lines.filter((l) => l.msg === 'dependency unavailable');
  const back = lines.filter((l) => l.msg === 'dependency available again');
  expect(down, JSON.stringify(down)).toHaveLength(1);
  expect(back, JSON.stringify(back)).toHaveLength(1);
  expect(down[0]).toMatchObject({ level: 40, dependency });
  expect(typeof down[0]?.reason).toBe('string');
  expect(down[0]).not.toHaveProperty('err');
  expect(back[0]).toMatchObject({ level: 30, dependency });
  expect(back[0]?.downMs).toBeGreaterThan(0);
  // No error-level line, no stack, for a request refused by the outage.
  expect(lines.filter((l) => l.level >= 50)).toEqual([]);
  expect(JSON.stringify(lines)).not.toMatch(/"stack"/);
  return { down: down[0], back: back[0] };
}

describe('PostgreSQL lost while running (a proxy in front of it, cut and restored)', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let port: number;
  let user: TestUser;
  let admin: TestUser;
  let conversationId: string;
  const log = logCapture();
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const database = await createTestDatabase();
    dropDatabase = () => database.drop();
    const url = new URL(database.url);
    proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
    t = await createTestApp({
      shared: { databaseUrl: proxy.url(database.url), redisPrefix: prefix },
      env: {
        LOG_LEVEL: 'info',
        KB_JOB_SWEEP_MS: '200',
        // A refused connection fails at once; this bounds a connection that hangs instead.
        DATABASE_CONNECT_TIMEOUT_MS: '3000',
      },
      logDestination: log.destination,
    });
    port = await listenLocal(t.app);
    user = await createUser(t.app, t.deps);
    admin = await createUser(t.app, t.deps, { admin: true });
    conversationId = await newConversation(t.app, user.access);
    const doc = await uploadNew(t.app, admin.access, {
      file: sampleText('thoracostomy', 'Chest Drain Insertion'),
      title: 'Chest Drains',
    });
    await waitIndexed(t.app, admin.access, doc);
  });
  afterAll(async () => {
    await proxy.restore().catch(() => undefined);
    await t.close();
    await proxy.cut();
    await dropDatabase();
    await deleteRedisPrefix(prefix);
  });

  const listConversations = () =>
    t.app.inject({ method: 'GET', url: '/conversations', headers: bearer(user.access) });
  const createConversation = () =>
    t.app.inject({
      method: 'POST',
      url: '/conversations',
      headers: bearer(user.access),
      payload: { title: 'During the outage' },
    });
  /** A query nobody asked before: the cache cannot answer it. */
  const searchUncached = (word: string) =>
    t.app.inject({
      method: 'GET',
      url: `/api/admin/kb/search?q=${encodeURIComponent(word)}`,
      headers: bearer(admin.access),
    });

  it('answers 503 with Retry-After on every route and socket, logs once, and recovers', async () => {
    const chat = await ChatClient.connect(port, user.access);
    const voice = await ChatClient.connect(port, user.access, '/api/voice/pipeline-ws');
    const from = log.lines.length;
    await proxy.cut();

    expectUnavailable(await listConversations());
    expectUnavailable(await createConversation());
    expectUnavailable(await searchUncached('thoracostomy drains'));
    expectUnavailable(await login(t.app, user.email, user.password));

    let sent = chat.frames.length;
    chat.send({
      type: 'message_send',
      conversation_id: conversationId,
      content: 'How is a chest drain inserted?',
      request_ref: 'outage-1',
    });
    const refused = await chat.next((f) => f.type === 'error', 15_000, sent);
    expect(refused).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      recoverable: true,
      request_ref: 'outage-1',
    });

    sent = voice.frames.length;
    voice.send({ type: 'text.input', text: 'How is a chest drain inserted?' });
    const voiceError = await voice.next((f) => f.type === 'error', 15_000, sent);
    expect(voiceError).toMatchObject({ code: 'SERVICE_UNAVAILABLE', recoverable: true });
    const refusedCount = 6;

    const ready = await t.app.inject({ method: 'GET', url: '/ready' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json<{ checks: Record<string, boolean> }>().checks).toMatchObject({
      postgres: false,
      redis: true,
    });

    await proxy.restore();
    // Without a restart: the same calls succeed once the database is back.
    const back = await eventually(() =>
      log.lines.find((l) => l.msg === 'dependency available again'),
    );
    expect(back.refused).toBe(refusedCount);
    expect((await listConversations()).statusCode).toBe(200);
    expect((await createConversation()).statusCode).toBe(201);
    expect((await searchUncached('thoracostomy insertion')).statusCode).toBe(200);
    expect((await login(t.app, user.email, user.password)).statusCode).toBe(200);
    sent = chat.frames.length;
    chat.send({
      type: 'message_send',
      conversation_id: conversationId,
      content: 'How is a chest drain inserted?',
    });
    await chat.next((f) => f.type === 'message_done', 15_000, sent);
    expect((await t.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);

    outageLines(log.since(from), 'postgres');
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^dependency_up\{dependency="postgres"\} 1$/m);
    expect(metrics).toMatch(
      new RegExp(
        `^dependency_refused_total\\{dependency="postgres"\\} ${String(refusedCount)}$`,
        'm',
      ),
    );
    chat.close();
    voice.close();
  });
});

describe('Redis lost while running (a server of the test own, killed and restarted)', () => {
  let redis: PrivateRedis;
  let t: TestApp;
  let port: number;
  let user: TestUser;
  const log = logCapture();

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    t = await createTestApp({
      env: { LOG_LEVEL: 'info', REDIS_URL: redis.url },
      logDestination: log.destination,
    });
    port = await listenLocal(t.app);
    user = await createUser(t.app, t.deps);
  });
  afterAll(async () => {
    await t.close();
    await redis.stop();
  });

  const me = () =>
    t.app.inject({ method: 'GET', url: '/api/auth/me', headers: bearer(user.access) });

  it('answers 503 to every signed-in request, logs the outage once, and recovers', async () => {
    const from = log.lines.length;
    await redis.kill();
    // The client notices the connection is gone within moments: from then on, 503s.
    const deadline = Date.now() + 10_000;
    while ((await me()).statusCode !== 503) {
      expect(Date.now()).toBeLessThan(deadline);
      await sleep(10);
    }
    for (let i = 0; i < 50; i += 1) expectUnavailable(await me());
    expectUnavailable(await login(t.app, user.email, user.password));
    // A socket cannot check its token: refused as unavailable (try again later), not unauthorized.
    const chat = await ChatClient.open(port, user.access);
    const closed = await chat.closed;
    expect(chat.frames).toEqual([
      expect.objectContaining({ type: 'error', code: 'SERVICE_UNAVAILABLE', recoverable: false }),
    ]);
    expect(closed.code).toBe(1013);
    const refused = 1 + 50 + 1 + 1;

    await redis.restart();
    const back = await eventually(() =>
      log.lines.find((l) => l.msg === 'dependency available again'),
    );
    expect((await me()).statusCode).toBe(200);
    outageLines(log.since(from), 'redis');
    expect(back.refused).toBe(refused);
  });
});
