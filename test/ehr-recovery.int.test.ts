import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { asc, eq } from 'drizzle-orm';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { auditLogs } from '../src/db/schema/index.js';
import { SYSTEM_CONTEXT } from '../src/modules/audit/service.js';
import type { EhrCaller } from '../src/modules/ehr/service.js';
import { buildOpsApp } from '../src/modules/ops/app.js';
import type { App } from '../src/platform/http/types.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createUser } from './helpers/factories.js';
import { EHR_TEST_BEARER, startEhrApp, type EhrTestApp } from './helpers/ehr-app.js';
import { FhirTestServer, type RecordedRequest } from './helpers/fhir-server.js';

/**
 * Issue 23 item 2: the EHR breaker recovers on its own. While it is not CLOSED the service probes
 * the FHIR server itself (`GET metadata`, with the usual token and timeout) once the half-open wait
 * is over, and the probes alone close it: a server that comes back is noticed with nobody asking,
 * and a user's question is never the trial call that fails (it is answered from the last good
 * value, or refused, without reaching the server).
 */

const HALF_OPEN_MS = 300;
const PROBE_INTERVAL_MS = 100;

const isProbe = (r: RecordedRequest): boolean =>
  r.method === 'GET' && new URL(r.url, 'http://x').pathname.endsWith('/metadata');
const closed = { timeout: 20_000, interval: 20 };

describe('the EHR breaker closes on its own probes when the FHIR server returns', () => {
  let ehr: EhrTestApp;
  let server: FhirTestServer;
  let ops: App;
  let caller: EhrCaller;

  const health = async () =>
    (await ops.inject({ method: 'GET', url: '/health/epic' })).json<Record<string, unknown>>();
  const breaker = () => ehr.t.deps.ehr.status().circuit_breaker.state;
  const summary = () => ehr.t.deps.ehr.patientSummary(caller, ehr.patient);

  beforeAll(async () => {
    ehr = await startEhrApp({
      env: {
        EHR_BREAKER_HALF_OPEN_AFTER_MS: String(HALF_OPEN_MS),
        EHR_BREAKER_PROBE_INTERVAL_MS: String(PROBE_INTERVAL_MS),
      },
    });
    server = ehr.server;
    caller = { id: ehr.clinician.id };
    ({ app: ops } = await buildOpsApp(ehr.t.deps));
    await ops.ready();
  });
  afterAll(async () => {
    await ops.close();
    await ehr.close();
  });

  it('probes nothing while closed', async () => {
    expect((await summary()).stale).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, HALF_OPEN_MS + 3 * PROBE_INTERVAL_MS));
    expect(server.requests.filter(isProbe)).toEqual([]);
  });

  it('closes with no user question once the server answers again; users never probe', async () => {
    server.inject({ kind: 'status', status: 503 });
    for (let i = 0; i < 10 && breaker() !== 'OPEN'; i += 1) {
      expect((await summary()).stale).toBe(true);
    }
    expect(await health()).toEqual({
      status: 'degraded',
      fallback_active: true,
      circuit_breaker: { state: 'OPEN' },
    });

    // The server is still down: the probes fail, the breaker opens again after each.
    await vi.waitFor(() => {
      expect(server.requests.filter(isProbe).length).toBeGreaterThanOrEqual(2);
    }, closed);
    expect(breaker()).not.toBe('CLOSED');
    // A question meanwhile is answered from the last good value and never reaches the server.
    const sent = server.requests.filter((r) => !isProbe(r)).length;
    for (let i = 0; i < 3; i += 1) expect((await summary()).stale).toBe(true);
    expect(server.requests.filter((r) => !isProbe(r)).length).toBe(sent);

    const recoveredAt = server.requests.length;
    server.clearFaults();
    await vi.waitFor(() => {
      expect(breaker()).toBe('CLOSED');
    }, closed);
    const since = server.requests.slice(recoveredAt);
    // Only probes reached the server from its return to CLOSED: three successful ones (and at
    // most one that was already on its way), each with the service's bearer token.
    expect(since.every(isProbe)).toBe(true);
    expect(since.length).toBeGreaterThanOrEqual(3);
    expect(since.length).toBeLessThanOrEqual(4);
    for (const probe of server.requests.filter(isProbe)) {
      expect(probe.headers.authorization).toBe(`Bearer ${EHR_TEST_BEARER}`);
    }
    expect(await health()).toEqual({
      status: 'ok',
      fallback_active: false,
      circuit_breaker: { state: 'CLOSED' },
    });
    await ehr.t.deps.ehr.idle();
    const events = await ehr.t.deps.database.db
      .select()
      .from(auditLogs)
      .where(eq(auditLogs.resourceType, 'dependency'))
      .orderBy(asc(auditLogs.seq));
    expect(events.map((e) => e.action)).toEqual(['degradation.activated', 'degradation.recovered']);

    // Closed again: the probing stopped.
    const probes = server.requests.filter(isProbe).length;
    await new Promise((resolve) => setTimeout(resolve, HALF_OPEN_MS + 3 * PROBE_INTERVAL_MS));
    expect(server.requests.filter(isProbe).length).toBe(probes);
    expect((await summary()).stale).toBe(false);
  });
});

describe('the probes with SMART backend services', () => {
  const clientId = 'assistant-backend';
  let dir: string;
  let server: FhirTestServer;
  let t: TestApp;
  let caller: EhrCaller;

  beforeAll(async () => {
    const keys = await generateKeyPair('RS384', { extractable: true });
    dir = await mkdtemp(path.join(tmpdir(), 'ehr-recovery-'));
    const keyFile = path.join(dir, 'key.jwk.json');
    await writeFile(keyFile, JSON.stringify(await exportJWK(keys.privateKey)), { mode: 0o600 });
    // Tokens live one second, so the probes after an outage must get a fresh one themselves.
    server = await FhirTestServer.start({
      auth: { smart: { clientId, publicJwk: await exportJWK(keys.publicKey), tokenTtlSeconds: 1 } },
      seed: { patients: 1, seed: 5 },
    });
    const patient = server.seeded.patientIds[0] ?? '';
    t = await createTestApp({
      env: {
        FHIR_BASE_URL: server.baseUrl,
        FHIR_AUTH: 'smart',
        FHIR_SMART_TOKEN_URL: server.tokenUrl,
        FHIR_SMART_CLIENT_ID: clientId,
        FHIR_SMART_PRIVATE_KEY_FILE: keyFile,
        EHR_ALLOWED_PATIENTS: patient,
        EHR_BREAKER_HALF_OPEN_AFTER_MS: '1500',
        EHR_BREAKER_PROBE_INTERVAL_MS: String(PROBE_INTERVAL_MS),
      },
    });
    const admin = await createUser(t.app, t.deps, { admin: true });
    caller = { id: (await createUser(t.app, t.deps)).id };
    await t.deps.flags.create(
      admin,
      { name: 'ehr.read', enabled: true, description: 'ehr.read', rolloutPercentage: 100 },
      SYSTEM_CONTEXT,
    );
  });
  afterAll(async () => {
    await t.close();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('get their own token and close the breaker', async () => {
    const patient = server.seeded.patientIds[0] ?? '';
    expect((await t.deps.ehr.patientSummary(caller, patient)).stale).toBe(false);
    server.inject({ kind: 'status', status: 503 });
    for (let i = 0; i < 10 && t.deps.ehr.status().circuit_breaker.state !== 'OPEN'; i += 1) {
      await t.deps.ehr.patientSummary(caller, patient);
    }
    expect(t.deps.ehr.status().circuit_breaker.state).toBe('OPEN');
    const issued = server.tokensIssued;
    server.clearFaults();
    await vi.waitFor(() => {
      expect(t.deps.ehr.status().circuit_breaker.state).toBe('CLOSED');
    }, closed);
    // The token of the outage had expired: the probes asked for a new one and used it.
    expect(server.tokensIssued).toBeGreaterThan(issued);
    const probes = server.requests.filter(isProbe);
    expect(probes.length).toBeGreaterThanOrEqual(3);
    for (const probe of probes) expect(probe.headers.authorization).toMatch(/^Bearer \S+$/);
  });
});
