import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_CONTEXT } from '../src/modules/audit/service.js';
import { bucketOf } from '../src/modules/flags/bucket.js';
import { buildOpsApp } from '../src/modules/ops/app.js';
import type { RegisteredRoute } from '../src/platform/http/route-policy.js';
import type { App } from '../src/platform/http/types.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, errorOf, type TestUser } from './helpers/factories.js';
import { startEhrApp, type EhrTestApp } from './helpers/ehr-app.js';
import type { FhirTestServer } from './helpers/fhir-server.js';
import { freePort, httpGet } from './helpers/process.js';
import { backends, startService, type Backends, type RunningService } from './helpers/service.js';
import { ChatClient, listenLocal } from './helpers/ws-client.js';

const TEST_CODE = { system: 'http://loinc.org', code: '72514-3' };

/** Polls `read` until `done` holds (sockets register asynchronously). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 100; i += 1) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return read();
}

describe('operator endpoints (spec 4.11) with an EHR over a real FHIR server', () => {
  let ehr: EhrTestApp;
  let server: FhirTestServer;
  let t: TestApp;
  let ops: App;
  let routes: RegisteredRoute[];
  let admin: TestUser;
  let clinician: TestUser;
  let patient: string;

  const get = (url: string, token: string | null = admin.access) =>
    ops.inject({ method: 'GET', url, headers: token === null ? {} : bearer(token) });
  const post = (url: string, payload: unknown, token = admin.access) =>
    ops.inject({ method: 'POST', url, payload: payload as object, headers: bearer(token) });

  beforeAll(async () => {
    ehr = await startEhrApp({
      env: { EHR_BREAKER_HALF_OPEN_AFTER_MS: '60000', EHR_TIMEOUT_MS: '2000' },
    });
    ({ server, t, patient, admin, clinician } = ehr);
    ({ app: ops, routes } = await buildOpsApp(t.deps));
    await ops.ready();
  });
  afterAll(async () => {
    await ops.close();
    await ehr.close();
  });

  it('answers provider health as bare objects; emotion and backchannel say they do not exist', async () => {
    const epic = await get('/health/epic', null);
    expect(epic.statusCode).toBe(200);
    expect(epic.json()).toEqual({
      status: 'ok',
      fallback_active: false,
      circuit_breaker: { state: 'CLOSED' },
    });
    for (const path of ['/health/emotion', '/health/backchannel']) {
      const res = await get(path, null);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ status: 'disabled', fallback_active: false });
    }
  });

  it('probes the voice engines with real work', async () => {
    const res = await get('/health/voice', null);
    expect(res.statusCode).toBe(200);
    const body = res.json<Record<string, Record<string, unknown>>>();
    expect(body.tts).toMatchObject({ status: 'ok' });
    expect(body.tts?.latency_ms).toEqual(expect.any(Number));
    // Nobody has spoken to this instance: the recognizer is not loaded for a health check.
    expect(body.stt).toMatchObject({ status: 'unknown', detail: 'not loaded yet' });
    expect(body).toMatchObject({ status: 'ok', fallback_active: false, active_sessions: 0 });
  });

  it('declares admin on every /api/admin route and nothing else; refuses others before work', async () => {
    const paths = routes.map((r) => `${r.method} ${r.url}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        'GET /health/epic',
        'GET /health/emotion',
        'GET /health/backchannel',
        'GET /health/voice',
        'GET /api/admin/provider-status',
        'GET /api/admin/epic/status',
        'GET /api/admin/metrics/epic',
        'GET /api/admin/features',
        'POST /api/admin/features',
        'POST /api/admin/features/batch',
        'GET /api/admin/audit/events',
        'GET /api/admin/audit/stats',
        'GET /api/admin/voice/sessions',
        'GET /api/admin/chaos/status',
        'GET /api/admin/ab-variant',
        'GET /api/voice/metrics',
      ]),
    );
    for (const route of routes) {
      expect(route.auth, route.url).toBe(route.url.startsWith('/api/admin/') ? 'admin' : 'none');
      if (route.auth !== 'admin') continue;
      const method = route.method as 'GET' | 'POST' | 'DELETE';
      const anonymous = await ops.inject({ method, url: route.url });
      expect(errorOf(anonymous, 401).code).toBe('UNAUTHORIZED');
      const user = await ops.inject({ method, url: route.url, headers: bearer(clinician.access) });
      expect(errorOf(user, 403).code).toBe('FORBIDDEN');
    }
  });

  it('requires an administrator on /api/admin/*, envelopes included', async () => {
    const anonymous = await get('/api/admin/epic/status', null);
    expect(errorOf(anonymous, 401).code).toBe('UNAUTHORIZED');
    const user = await get('/api/admin/features', clinician.access);
    expect(user.statusCode).toBe(403);
    const missing = await get('/api/admin/nothing-here');
    expect(errorOf(missing, 404).code).toBe('NOT_FOUND');
  });

  it('reports the breaker state, the fallback and write figures as the EHR fails and recovers', async () => {
    expect(dataOf(await get('/api/admin/epic/status'))).toMatchObject({
      configured: true,
      status: 'ok',
      circuit_breaker: { state: 'CLOSED', half_open_after_ms: 60_000 },
      auth: 'bearer',
    });
    const noRefusals = { flag_off: 0, patient_not_allowed: 0, invalid_input: 0 };
    expect(dataOf(await get('/api/admin/metrics/epic'))).toEqual({
      scope: 'instance',
      write_requests: 0,
      write_success_rate: null,
      avg_write_latency_ms: null,
      write_refused: noRefusals,
    });
    await t.deps.ehr.recordObservation(
      clinician,
      patient,
      { code: TEST_CODE, value: { value: 3, unit: '{score}' } },
      'ops-write-1',
    );
    server.inject({ kind: 'status', status: 503 });
    await expect(
      t.deps.ehr.recordObservation(
        clinician,
        patient,
        { code: TEST_CODE, value: { value: 4, unit: '{score}' } },
        'ops-write-2',
      ),
    ).rejects.toThrow();
    const writes = dataOf<Record<string, number>>(await get('/api/admin/metrics/epic'));
    expect(writes).toMatchObject({
      write_requests: 2,
      write_success_rate: 0.5,
      write_refused: noRefusals,
    });
    expect(writes.avg_write_latency_ms).toBeGreaterThanOrEqual(0);
    server.clearFaults();

    // Refused writes are requests too, not successes, counted by reason and never timed.
    const sent = server.requests.length;
    const refused = (patientId: string, key: string, code = 'FORBIDDEN') =>
      expect(
        t.deps.ehr.recordObservation(
          clinician,
          patientId,
          { code: TEST_CODE, value: { value: 5, unit: '{score}' } },
          key,
        ),
      ).rejects.toMatchObject({ code });
    await refused('pat-not-allowed', 'ops-write-3');
    await refused('not a FHIR id', 'ops-write-4', 'VALIDATION_ERROR');
    const off = await post('/api/admin/features', { feature: 'ehr.write', enabled: false });
    expect(off.statusCode).toBe(200);
    await refused(patient, 'ops-write-5');
    await post('/api/admin/features', { feature: 'ehr.write', enabled: true });
    expect(server.requests.length).toBe(sent);
    expect(dataOf(await get('/api/admin/metrics/epic'))).toEqual({
      scope: 'instance',
      write_requests: 5,
      write_success_rate: 0.2,
      avg_write_latency_ms: writes.avg_write_latency_ms,
      write_refused: { flag_off: 1, patient_not_allowed: 1, invalid_input: 1 },
    });

    // A good read first, so the fallback has something to serve; then the EHR fails every call.
    server.clearFaults();
    await t.deps.ehr.patientSummary(clinician, patient);
    server.inject({ kind: 'status', status: 503 });
    for (let i = 0; i < 10 && t.deps.ehr.status().circuit_breaker.state !== 'OPEN'; i += 1) {
      await t.deps.ehr.patientSummary(clinician, patient).catch(() => undefined);
    }
    const open = (await get('/health/epic', null)).json<Record<string, unknown>>();
    expect(open).toEqual({
      status: 'degraded',
      fallback_active: true,
      circuit_breaker: { state: 'OPEN' },
    });
    expect(dataOf(await get('/api/admin/epic/status'))).toMatchObject({
      status: 'degraded',
      fallback_active: true,
      circuit_breaker: { state: 'OPEN' },
    });
    const providers = dataOf<{ providers: Record<string, Record<string, unknown>> }>(
      await get('/api/admin/provider-status'),
    );
    expect(providers.providers.ehr).toMatchObject({ status: 'degraded', fallback_active: true });
    expect(providers.providers.llm).toMatchObject({ provider: 'extractive', status: 'ok' });
    expect(providers.providers.emotion).toMatchObject({ status: 'disabled' });
    expect(providers.providers.backchannel).toMatchObject({ status: 'disabled' });
    expect(providers.providers.tts).toMatchObject({ status: 'ok' });
    server.clearFaults();
  });

  it('switches features one at a time and in all-or-nothing batches, audited', async () => {
    const listed = dataOf<{ items: { name: string }[]; total: number }>(
      await get('/api/admin/features'),
    );
    expect(listed.items.map((f) => f.name)).toEqual(expect.arrayContaining(['ehr.read']));
    expect(listed.total).toBe(listed.items.length);

    const off = await post('/api/admin/features', { feature: 'ehr.write', enabled: false });
    expect(dataOf(off)).toMatchObject({
      changed: 1,
      items: [{ name: 'ehr.write', enabled: false }],
    });
    const again = await post('/api/admin/features', { feature: 'ehr.write', enabled: false });
    expect(dataOf(again)).toMatchObject({ changed: 0 });
    expect(await t.deps.flags.isEnabled('ehr.write', clinician.id)).toBe(false);

    const unknown = await post('/api/admin/features/batch', {
      updates: [
        { feature: 'ehr.write', enabled: true },
        { feature: 'no.such.flag', enabled: true },
      ],
    });
    expect(errorOf(unknown, 404).message).toContain('no.such.flag');
    expect((await t.deps.flags.get('ehr.write')).enabled).toBe(false);

    const twice = await post('/api/admin/features/batch', {
      updates: [
        { feature: 'ehr.write', enabled: true },
        { feature: 'ehr.write', enabled: false },
      ],
    });
    expect(errorOf(twice, 422).details).toEqual([
      { field: 'body.updates.1.feature', message: 'names a flag already in the batch' },
    ]);
    for (const payload of [
      {},
      { updates: [] },
      { feature: 'ehr.write' },
      { feature: 'ehr.write', enabled: 'yes' },
      { feature: 'Bad Name', enabled: true },
      { feature: 'ehr.write', enabled: true, extra: 1 },
    ]) {
      const url = 'updates' in payload ? '/api/admin/features/batch' : '/api/admin/features';
      expect((await post(url, payload)).statusCode).toBe(422);
    }

    const batch = await post('/api/admin/features/batch', {
      updates: [
        { feature: 'ehr.write', enabled: true },
        { feature: 'ehr.read', enabled: true },
      ],
    });
    expect(dataOf(batch)).toMatchObject({
      changed: 1,
      items: [
        { name: 'ehr.write', enabled: true },
        { name: 'ehr.read', enabled: true },
      ],
    });
    const audited = dataOf<{ events: { action: string; actor_id: string; resource_id: string }[] }>(
      await get('/api/admin/audit/events?event_type=flag.updated&limit=5'),
    );
    expect(audited.events.slice(0, 2).map((e) => [e.resource_id, e.actor_id])).toEqual([
      ['ehr.write', admin.id],
      ['ehr.write', admin.id],
    ]);
  });

  it('answers the A/B variant from the flag bucketing', async () => {
    await t.deps.flags.create(
      admin,
      { name: 'ab.new-summary', enabled: true, description: 'test', rolloutPercentage: 50 },
      SYSTEM_CONTEXT,
    );
    const ids = Array.from(
      { length: 20 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    const variants = new Set<string>();
    for (const id of ids) {
      const body = dataOf(await get(`/api/admin/ab-variant?user_id=${id}&test=ab.new-summary`));
      const bucket = bucketOf('ab.new-summary', id);
      expect(body).toEqual({
        user_id: id,
        test: 'ab.new-summary',
        bucket,
        variant: bucket < 50 ? 'treatment' : 'control',
        enabled: bucket < 50,
        flag_exists: true,
        rollout_percentage: 50,
      });
      variants.add(String(body.variant));
    }
    expect(variants).toEqual(new Set(['treatment', 'control']));
    const missing = dataOf(await get(`/api/admin/ab-variant?user_id=${ids[0] ?? ''}&test=ab.none`));
    expect(missing).toMatchObject({
      variant: 'control',
      flag_exists: false,
      rollout_percentage: null,
    });
    for (const query of [
      '',
      '?user_id=x&test=ab.none',
      `?user_id=${ids[0] ?? ''}`,
      `?user_id=${ids[0] ?? ''}&test=ab.none&x=1`,
    ]) {
      expect((await get(`/api/admin/ab-variant${query}`)).statusCode).toBe(422);
    }
  });

  it('lists audit events by type, family prefix and time, with their count; and figures', async () => {
    const all = dataOf<{ count: number; total: number; events: { action: string }[] }>(
      await get('/api/admin/audit/events?event_type_prefix=ehr&limit=200'),
    );
    expect(all.count).toBe(all.events.length);
    expect(all.total).toBeGreaterThanOrEqual(all.count);
    expect(all.events.map((e) => e.action)).toEqual(
      expect.arrayContaining(['ehr.read', 'ehr.write', 'ehr.write_failed']),
    );
    expect(all.events.every((e) => e.action.startsWith('ehr.'))).toBe(true);
    const dotted = dataOf(await get('/api/admin/audit/events?event_type_prefix=ehr.&limit=200'));
    expect(dotted).toEqual(all);
    const writes = dataOf<{ count: number; events: { action: string }[] }>(
      await get('/api/admin/audit/events?event_type=ehr.write'),
    );
    expect(writes.events.map((e) => e.action)).toEqual(['ehr.write']);
    const limited = dataOf<{ count: number }>(await get('/api/admin/audit/events?limit=2'));
    expect(limited.count).toBe(2);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(dataOf(await get(`/api/admin/audit/events?since=${future}`))).toEqual({
      count: 0,
      total: 0,
      events: [],
    });
    const contradiction = dataOf(
      await get('/api/admin/audit/events?event_type=ehr.read&event_type_prefix=flag'),
    );
    expect(contradiction).toMatchObject({ count: 0 });
    for (const query of ['limit=0', 'limit=201', 'event_type=EHR', 'since=yesterday', 'x=1']) {
      expect((await get(`/api/admin/audit/events?${query}`)).statusCode).toBe(422);
    }

    const stats = dataOf<Record<string, unknown> & { by_family: Record<string, number> }>(
      await get('/api/admin/audit/stats'),
    );
    const familyTotal = Object.values(stats.by_family).reduce((a, b) => a + b, 0);
    expect(stats.total).toBe(familyTotal);
    expect(stats.by_family.ehr).toBe(all.total);
    expect(stats.failures).toBeGreaterThanOrEqual(1);
    expect(stats.last_24h).toBe(stats.total);
    expect(Date.parse(String(stats.newest))).toBeGreaterThanOrEqual(
      Date.parse(String(stats.oldest)),
    );
  });

  it('counts open voice sockets and reports stage figures', async () => {
    const port = await listenLocal(t.app);
    const sessions = () => get('/api/admin/voice/sessions').then((r) => dataOf(r));
    expect(await sessions()).toMatchObject({ active_count: 0, scope: 'cluster' });
    const socket = await ChatClient.open(port, clinician.access, '/api/voice/pipeline-ws');
    const open = await until(sessions, (s) => s.active_count === 1);
    expect(open).toMatchObject({
      active_count: 1,
      instance_count: 1,
      by_endpoint: { '/api/voice/pipeline-ws': 1, '/api/realtime': 0 },
    });
    socket.ws.close();
    await socket.closed;
    expect(await until(sessions, (s) => s.active_count === 0)).toMatchObject({ active_count: 0 });

    t.deps.metrics.voiceStage.observe({ stage: 'stt' }, 0.3);
    const metrics = await ops.inject({ method: 'GET', url: '/api/voice/metrics' });
    expect(metrics.statusCode).toBe(200);
    const body = dataOf<{ stages: Record<string, Record<string, unknown>> }>(metrics);
    expect(body).toMatchObject({ scope: 'instance', window: 'since_start', active_sessions: 0 });
    expect(body.stages.stt).toMatchObject({ count: 1, mean_ms: 300 });
    expect(body.stages.end_to_end).toEqual({ count: 0, p50_ms: null, p95_ms: null, mean_ms: null });
  });

  it('refuses fault injection unless the instance started with CHAOS_ENABLED', async () => {
    const status = dataOf(await get('/api/admin/chaos/status'));
    expect(status).toMatchObject({ enabled: false, scope: 'instance' });
    const set = await post('/api/admin/chaos/faults', {
      dependency: 'ehr',
      latency_ms: 0,
      error_rate: 1,
    });
    expect(errorOf(set, 409).code).toBe('CONFLICT');
  });
});

describe('fault injection through the operator server (CHAOS_ENABLED=true)', () => {
  let t: TestApp;
  let ops: App;
  let admin: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite', env: { CHAOS_ENABLED: 'true' } });
    ops = (await buildOpsApp(t.deps)).app;
    await ops.ready();
    admin = await createUser(t.app, t.deps, { admin: true });
  });
  afterAll(async () => {
    await ops.close();
    await t.close();
  });

  it('sets, shows and resets faults per dependency, audited', async () => {
    const set = await ops.inject({
      method: 'POST',
      url: '/api/admin/chaos/faults',
      headers: bearer(admin.access),
      payload: { dependency: 'tts', latency_ms: 250, error_rate: 0.5 },
    });
    expect(set.statusCode).toBe(200);
    expect(dataOf(set)).toMatchObject({
      enabled: true,
      dependencies: {
        tts: { latency_ms: 250, error_rate: 0.5 },
        ehr: { latency_ms: 0, error_rate: 0 },
      },
    });
    for (const payload of [
      { dependency: 'db', latency_ms: 0, error_rate: 0 },
      { dependency: 'tts', latency_ms: -1, error_rate: 0 },
      { dependency: 'tts', latency_ms: 0, error_rate: 1.5 },
      { dependency: 'tts', latency_ms: 0 },
    ]) {
      const res = await ops.inject({
        method: 'POST',
        url: '/api/admin/chaos/faults',
        headers: bearer(admin.access),
        payload,
      });
      expect(res.statusCode).toBe(422);
    }
    const reset = await ops.inject({
      method: 'DELETE',
      url: '/api/admin/chaos/faults',
      headers: bearer(admin.access),
    });
    expect(dataOf(reset)).toMatchObject({
      dependencies: { tts: { latency_ms: 0, error_rate: 0 } },
    });
    const events = dataOf<{ events: { action: string; actor_id: string }[] }>(
      await ops.inject({
        method: 'GET',
        url: '/api/admin/audit/events?event_type_prefix=chaos',
        headers: bearer(admin.access),
      }),
    );
    expect(events.events.map((e) => [e.action, e.actor_id])).toEqual([
      ['chaos.reset', admin.id],
      ['chaos.fault_set', admin.id],
    ]);
  });

  it('shows an injected speech failure in the voice health probe', async () => {
    const headers = bearer(admin.access);
    await ops.inject({
      method: 'POST',
      url: '/api/admin/chaos/faults',
      headers,
      payload: { dependency: 'tts', latency_ms: 0, error_rate: 1 },
    });
    const health = (await ops.inject({ method: 'GET', url: '/health/voice' })).json<
      Record<string, unknown>
    >();
    expect(health).toMatchObject({
      status: 'degraded',
      tts: { status: 'unavailable', detail: 'the probe failed' },
      stt: { status: 'unknown' },
    });
    await ops.inject({ method: 'DELETE', url: '/api/admin/chaos/faults', headers });
  });
});

describe('two instances on one Redis: voice sessions and feature switches seen by both', () => {
  let one: TestApp;
  let two: TestApp;
  let opsTwo: App;
  let admin: TestUser;
  let clinician: TestUser;

  beforeAll(async () => {
    const fast = { WS_REGISTRY_REFRESH_MS: '200', WS_REGISTRY_TTL_MS: '2000' };
    one = await createTestApp({ env: fast });
    two = await createTestApp({
      env: fast,
      shared: {
        databaseUrl: one.deps.config.databaseUrl ?? '',
        redisPrefix: one.deps.config.redisPrefix,
      },
    });
    opsTwo = (await buildOpsApp(two.deps)).app;
    await opsTwo.ready();
    admin = await createUser(one.app, one.deps, { admin: true });
    clinician = await createUser(one.app, one.deps);
  });
  afterAll(async () => {
    await opsTwo.close();
    await two.close();
    await one.close();
  });

  it('counts a voice socket on the first instance in the second one’s operator answer', async () => {
    const port = await listenLocal(one.app);
    const sessions = () =>
      opsTwo
        .inject({ method: 'GET', url: '/api/admin/voice/sessions', headers: bearer(admin.access) })
        .then((r) => dataOf(r));
    const socket = await ChatClient.open(port, clinician.access, '/api/realtime');
    expect(await until(sessions, (s) => s.active_count === 1)).toMatchObject({
      active_count: 1,
      scope: 'cluster',
      by_endpoint: { '/api/voice/pipeline-ws': 0, '/api/realtime': 1 },
      instance_count: 0,
    });
    socket.ws.close();
    await socket.closed;
    expect(await until(sessions, (s) => s.active_count === 0)).toMatchObject({ active_count: 0 });
  });

  it('a switch thrown on the second instance’s operator port reaches the first instance', async () => {
    await one.deps.flags.create(
      admin,
      { name: 'ehr.read', enabled: false, description: 'EHR reads', rolloutPercentage: 100 },
      SYSTEM_CONTEXT,
    );
    expect(await one.deps.flags.isEnabled('ehr.read', clinician.id)).toBe(false);
    const res = await opsTwo.inject({
      method: 'POST',
      url: '/api/admin/features',
      headers: bearer(admin.access),
      payload: { feature: 'ehr.read', enabled: true },
    });
    expect(dataOf(res)).toMatchObject({ changed: 1 });
    const seen = await until(
      () => one.deps.flags.isEnabled('ehr.read', clinician.id),
      (on) => on,
    );
    expect(seen).toBe(true);
  });
});

describe('the operator server as a process runs on its own port', () => {
  let env: Backends;
  let service: RunningService;
  let opsPort: number;

  beforeAll(async () => {
    env = await backends('embedded');
    opsPort = await freePort();
    service = await startService({ ...env.env, OPS_PORT: String(opsPort) });
  });
  afterAll(async () => {
    service.process.child.kill('SIGTERM');
    await service.process.exited;
    await env.dispose();
  });

  it('serves the operator paths there and not on the API port', async () => {
    const epic = await httpGet(opsPort, '/health/epic');
    expect(epic.status).toBe(200);
    expect(JSON.parse(epic.body)).toEqual({
      status: 'disabled',
      fallback_active: false,
      circuit_breaker: { state: null },
    });
    const onApi = await fetch(`${service.base}/health/epic`);
    expect(onApi.status).toBe(404);
    const status = await fetch(`http://127.0.0.1:${String(opsPort)}/api/admin/epic/status`, {
      headers: bearer(service.token),
    });
    expect(status.status).toBe(200);
    expect(((await status.json()) as { data: unknown }).data).toMatchObject({
      configured: false,
      status: 'disabled',
      circuit_breaker: { state: null },
    });
    const docs = await httpGet(opsPort, '/openapi.json');
    expect(JSON.parse(docs.body)).toMatchObject({
      info: { title: 'Medical Assistant Service: operator API' },
    });
  });
});

describe('the operator OpenAPI document', () => {
  it('is served as committed in docs/openapi-ops.json (`make openapi` rewrites it)', async () => {
    const t = await createTestApp({ backend: 'pglite' });
    const ops = (await buildOpsApp(t.deps)).app;
    try {
      const served = (await ops.inject({ method: 'GET', url: '/openapi.json' })).json<unknown>();
      const committed = JSON.parse(
        await readFile(path.join(import.meta.dirname, '..', 'docs', 'openapi-ops.json'), 'utf8'),
      ) as unknown;
      expect(served).toEqual(committed);
    } finally {
      await ops.close();
      await t.close();
    }
  });
});
