import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, type TestUser } from './helpers/factories.js';
import { ChatClient, listenLocal } from './helpers/ws-client.js';

/**
 * GET /api/admin/panel/websocket-status and GET /api/admin/panel/metrics (spec 4.4, issue 12):
 * real sockets on two instances sharing one Redis, an instance that dies without cleaning up,
 * the embedded default, and this instance's figures after known requests.
 */

const TTL_MS = 1500;
/** Short registry timings, so that a dead instance drops out within the test. */
const FAST = { WS_REGISTRY_TTL_MS: String(TTL_MS), WS_REGISTRY_REFRESH_MS: '250' };
const CHAT = '/ws';
const CHAT_ALIAS = '/api/realtime/ws';
const VOICE = '/api/voice/pipeline-ws';
const VOICE_ALIAS = '/api/realtime';

interface SocketStatus {
  scope: 'cluster' | 'instance';
  instance_id: string;
  total: number;
  by_endpoint: Record<string, number>;
  users_total: number;
  by_user: {
    user_id: string;
    email: string | null;
    connections: number;
    endpoints: Record<string, number>;
  }[];
  instances: {
    id: string;
    hostname: string;
    pid: number;
    connections: number;
    updated_at: string;
  }[];
}

const endpoints = (chat: number, chatAlias: number, voice: number, voiceAlias: number) => ({
  [CHAT]: chat,
  [CHAT_ALIAS]: chatAlias,
  [VOICE]: voice,
  [VOICE_ALIAS]: voiceAlias,
});

async function socketStatus(t: TestApp, admin: TestUser): Promise<SocketStatus> {
  const res = await t.app.inject({
    method: 'GET',
    url: '/api/admin/panel/websocket-status',
    headers: bearer(admin.access),
  });
  return dataOf<SocketStatus>(res);
}

/** Polls websocket-status until `check` passes (registry writes are debounced), at most 10 s. */
async function statusWhen(
  t: TestApp,
  admin: TestUser,
  check: (s: SocketStatus) => void,
): Promise<SocketStatus> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const status = await socketStatus(t, admin);
    try {
      check(status);
      return status;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    await sleep(50);
  }
}

describe('websocket-status across instances (PostgreSQL + Redis)', () => {
  let one: TestApp;
  let two: TestApp;
  const ports: number[] = [];
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let clients: ChatClient[] = [];
  const open = async (instance: number, user: TestUser, path: string) => {
    const client = await ChatClient.connect(ports[instance] ?? 0, user.access, path);
    clients.push(client);
    return client;
  };
  const shut = async (client: ChatClient) => {
    client.close();
    await client.closed;
  };

  beforeAll(async () => {
    one = await createTestApp({
      env: FAST,
      // A route that fails, for a 5xx answer in the request figures.
      beforeReady: (app) => {
        app.get(
          '/api/test-fault',
          { config: { auth: 'none' }, schema: { operationId: 'testFault' } },
          () => {
            throw new Error('fault injected by the test');
          },
        );
      },
    });
    two = await createTestApp({
      env: FAST,
      shared: {
        databaseUrl: one.deps.config.databaseUrl ?? '',
        redisPrefix: one.deps.config.redisPrefix,
      },
    });
    for (const t of [one, two]) ports.push(await listenLocal(t.app));
    admin = await createUser(one.app, one.deps, { admin: true });
    alice = await createUser(one.app, one.deps);
    bob = await createUser(one.app, one.deps);
  });
  afterEach(async () => {
    await Promise.all(clients.map(shut));
    clients = [];
  });
  afterAll(async () => {
    await two.close();
    await one.close();
  });

  it('lists every endpoint at 0 and both instances while no socket is open', async () => {
    const status = await statusWhen(one, admin, (s) => {
      expect(s.instances).toHaveLength(2);
    });
    expect(status).toMatchObject({ scope: 'cluster', total: 0, users_total: 0, by_user: [] });
    expect(status.by_endpoint).toEqual(endpoints(0, 0, 0, 0));
    const ids = [status.instance_id, (await socketStatus(two, admin)).instance_id];
    expect(new Set(ids).size).toBe(2);
    expect(status.instances.map((i) => i.id).sort()).toEqual([...ids].sort());
    for (const instance of status.instances) {
      expect(instance.pid).toBe(process.pid);
      expect(instance.id).toContain(`${instance.hostname}:${String(process.pid)}:`);
      expect(Date.parse(instance.updated_at)).not.toBeNaN();
    }
  });

  it('counts sockets of both instances per endpoint, per user and per instance', async () => {
    await open(0, alice, CHAT);
    await open(1, alice, CHAT_ALIAS);
    await open(1, alice, VOICE);
    await open(1, bob, CHAT);
    await open(0, bob, VOICE_ALIAS);
    for (const t of [one, two]) {
      const status = await statusWhen(t, admin, (s) => {
        expect(s.total).toBe(5);
      });
      expect(status.by_endpoint).toEqual(endpoints(2, 1, 1, 1));
      expect(status.users_total).toBe(2);
      expect(status.by_user).toEqual([
        {
          user_id: alice.id,
          email: alice.email,
          connections: 3,
          endpoints: endpoints(1, 1, 1, 0),
        },
        { user_id: bob.id, email: bob.email, connections: 2, endpoints: endpoints(1, 0, 0, 1) },
      ]);
      const own = (await socketStatus(one, admin)).instance_id;
      const byInstance = Object.fromEntries(status.instances.map((i) => [i.id, i.connections]));
      const other = status.instances.find((i) => i.id !== own)?.id ?? '';
      expect(byInstance).toEqual({ [own]: 2, [other]: 3 });
    }
    // Live instances keep their entries beyond the TTL: they rewrite them.
    await sleep(TTL_MS * 2);
    const later = await socketStatus(one, admin);
    expect(later.total).toBe(5);
    expect(later.instances).toHaveLength(2);
  });

  it('lowers the counts as sockets close, on every instance', async () => {
    const a1 = await open(0, alice, CHAT);
    const a2 = await open(1, alice, VOICE);
    const b1 = await open(1, bob, CHAT);
    await statusWhen(one, admin, (s) => {
      expect(s.total).toBe(3);
    });
    await shut(a2);
    const afterVoice = await statusWhen(one, admin, (s) => {
      expect(s.total).toBe(2);
    });
    expect(afterVoice.by_endpoint).toEqual(endpoints(2, 0, 0, 0));
    expect(afterVoice.by_user.map((u) => [u.user_id, u.connections])).toEqual(
      [
        [alice.id, 1],
        [bob.id, 1],
      ].sort((x, y) => (String(x[0]) < String(y[0]) ? -1 : 1)),
    );
    await shut(a1);
    await shut(b1);
    const empty = await statusWhen(two, admin, (s) => {
      expect(s.total).toBe(0);
    });
    expect(empty.by_endpoint).toEqual(endpoints(0, 0, 0, 0));
    expect(empty).toMatchObject({ users_total: 0, by_user: [] });
    expect(empty.instances.map((i) => i.connections)).toEqual([0, 0]);
  });

  it('drops an instance that dies without cleaning up once its entry expires', async () => {
    const three = await createTestApp({
      env: FAST,
      shared: {
        databaseUrl: one.deps.config.databaseUrl ?? '',
        redisPrefix: one.deps.config.redisPrefix,
      },
    });
    try {
      const port = await listenLocal(three.app);
      const threeId = (await socketStatus(three, admin)).instance_id;
      const client = await ChatClient.connect(port, bob.access, CHAT_ALIAS);
      clients.push(client);
      await open(0, alice, CHAT);
      const seen = await statusWhen(one, admin, (s) => {
        expect(s.total).toBe(2);
      });
      expect(seen.instances.map((i) => i.id)).toContain(threeId);
      // As if the process were killed: it can no longer refresh or remove its entry.
      three.deps.redis?.disconnect();
      const after = await statusWhen(one, admin, (s) => {
        expect(s.instances.map((i) => i.id)).not.toContain(threeId);
      });
      expect(after.instances).toHaveLength(2);
      expect(after.total).toBe(1);
      expect(after.by_endpoint).toEqual(endpoints(1, 0, 0, 0));
      expect(after.by_user.map((u) => u.user_id)).toEqual([alice.id]);
      // The reader also removed the dead instance from the list of instances.
      expect(await one.deps.redis?.zrange('ws-registry:instances', 0, -1)).not.toContain(threeId);
    } finally {
      await three.close();
    }
  });

  it('reports this instance’s process, pool and request figures', async () => {
    const metrics = async () =>
      dataOf<Metrics>(
        await one.app.inject({
          method: 'GET',
          url: '/api/admin/panel/metrics',
          headers: bearer(admin.access),
        }),
      );
    const before = await metrics();
    const health = await one.app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    const missing = await one.app.inject({ method: 'GET', url: '/api/nothing-here' });
    expect(missing.statusCode).toBe(404);
    const refused = await one.app.inject({ method: 'GET', url: '/api/admin/panel/metrics' });
    expect(refused.statusCode).toBe(401);
    const failed = await one.app.inject({ method: 'GET', url: '/api/test-fault' });
    expect(failed.statusCode).toBe(500);
    const after = await metrics();

    // Five requests since `before`: itself, /health, a 404, a 401 and a 500.
    const count = (m: Metrics, rate: number | null) => Math.round((rate ?? 0) * m.http.requests);
    expect(after.http.requests - before.http.requests).toBe(5);
    expect(count(after, after.http.client_error_rate)).toBe(
      count(before, before.http.client_error_rate) + 2,
    );
    expect(count(after, after.http.error_rate)).toBe(count(before, before.http.error_rate) + 1);
    expect(after.http.window_seconds).toBeGreaterThan(0);
    expect(after.http.window_seconds).toBeLessThanOrEqual(300);
    expect(after.http.requests_per_second).toBeCloseTo(
      after.http.requests / after.http.window_seconds,
      6,
    );
    const { p50, p95, p99 } = after.http.latency_ms;
    expect(p50).toBeGreaterThan(0);
    expect(p95).toBeGreaterThanOrEqual(p50 ?? 0);
    expect(p99).toBeGreaterThanOrEqual(p95 ?? 0);
    expect(p99).toBeLessThanOrEqual(5000);

    expect(after.instance_id).toBe((await socketStatus(one, admin)).instance_id);
    expect(after.process.pid).toBe(process.pid);
    expect(after.cpu.percent).toBeGreaterThanOrEqual(0);
    expect(after.cpu.user_seconds).toBeGreaterThan(0);
    expect(after.memory.rss_bytes).toBeGreaterThan(after.memory.heap_used_bytes);
    expect(after.memory.heap_total_bytes).toBeGreaterThanOrEqual(after.memory.heap_used_bytes);
    expect(after.database_pool).toMatchObject({
      kind: 'postgresql',
      max: one.deps.config.databasePoolSize,
    });
    const { total = -1, idle = -1, waiting = -1 } = after.database_pool;
    expect(total).toBeGreaterThanOrEqual(idle);
    expect(idle).toBeGreaterThanOrEqual(0);
    expect(waiting).toBe(0);
    expect(total).toBeLessThanOrEqual(one.deps.config.databasePoolSize);
    // Lag beyond the monitor's timer period: never negative, the largest above the median.
    const lag = after.event_loop_lag;
    expect(lag.p50_ms).toBeGreaterThanOrEqual(0);
    expect(lag.p99_ms).toBeGreaterThanOrEqual(lag.p50_ms ?? 0);
    expect(lag.max_ms).toBeGreaterThanOrEqual(lag.p99_ms ?? 0);
  });
});

interface Metrics {
  instance_id: string;
  process: { pid: number; uptime_seconds: number };
  cpu: { percent: number | null; user_seconds: number; system_seconds: number };
  memory: { rss_bytes: number; heap_used_bytes: number; heap_total_bytes: number };
  event_loop_lag: { p50_ms: number | null; p99_ms: number | null; max_ms: number | null };
  database_pool: { kind: string; max?: number; total?: number; idle?: number; waiting?: number };
  http: {
    window_seconds: number;
    requests: number;
    requests_per_second: number;
    error_rate: number | null;
    client_error_rate: number | null;
    latency_ms: { p50: number | null; p95: number | null; p99: number | null };
  };
}

describe('the embedded default (PGlite, no Redis)', () => {
  let t: TestApp;
  let port: number;
  let admin: TestUser;
  let user: TestUser;
  const clients: ChatClient[] = [];
  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite' });
    port = await listenLocal(t.app);
    admin = await createUser(t.app, t.deps, { admin: true });
    user = await createUser(t.app, t.deps);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all(clients.map((c) => c.closed));
    await t.close();
  });

  it('reports its own sockets, at once', async () => {
    clients.push(await ChatClient.connect(port, user.access, CHAT));
    clients.push(await ChatClient.connect(port, user.access, VOICE_ALIAS));
    clients.push(await ChatClient.connect(port, admin.access, CHAT));
    const status = await socketStatus(t, admin);
    expect(status).toMatchObject({ scope: 'instance', total: 3, users_total: 2 });
    expect(status.by_endpoint).toEqual(endpoints(2, 0, 0, 1));
    expect(status.by_user[0]).toEqual({
      user_id: user.id,
      email: user.email,
      connections: 2,
      endpoints: endpoints(1, 0, 0, 1),
    });
    expect(status.instances).toEqual([
      expect.objectContaining({ id: status.instance_id, connections: 3, pid: process.pid }),
    ]);
  });

  it('says its database is PGlite, with no pool', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/admin/panel/metrics',
      headers: bearer(admin.access),
    });
    const data = dataOf<Metrics>(res);
    expect(data.database_pool).toEqual({ kind: 'pglite' });
    expect(data.http.requests).toBeGreaterThan(0);
  });
});
