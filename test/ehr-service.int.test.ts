import { asc, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { auditLogs } from '../src/db/schema/index.js';
import { AppError } from '../src/errors.js';
import { SYSTEM_CONTEXT } from '../src/modules/audit/service.js';
import { PATIENT_NOT_ALLOWED } from '../src/modules/ehr/errors.js';
import type { EhrCaller } from '../src/modules/ehr/service.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { FhirTestServer } from './helpers/fhir-server.js';
import { scrape, valueOf } from './helpers/metrics.js';

const BEARER = 'ehr-service-test-token';
const TEST_CODE = { system: 'urn:test:ehr-service', code: 'pain-score', display: 'Pain score' };

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected a refusal');
}

describe('EhrService against a real FHIR server', () => {
  let server: FhirTestServer;
  let t: TestApp;
  let admin: TestUser;
  let clinician: EhrCaller;
  let allowed: string;
  let second: string;
  let notAllowed: string;
  let firstFetchedAt: string;

  const auditOf = (actions: string[]) =>
    t.deps.database.db
      .select()
      .from(auditLogs)
      .where(inArray(auditLogs.action, actions))
      .orderBy(asc(auditLogs.seq));
  const lastAudit = async (action: string) => (await auditOf([action])).at(-1);
  const enable = (name: string) =>
    t.deps.flags.create(
      admin,
      { name, enabled: true, description: name, rolloutPercentage: 100 },
      SYSTEM_CONTEXT,
    );
  const requestedFor = (patientId: string) =>
    server.requests.filter((r) => r.url.includes(patientId));

  beforeAll(async () => {
    server = await FhirTestServer.start({
      auth: { bearer: BEARER },
      seed: { patients: 3, seed: 29 },
    });
    [allowed = '', second = '', notAllowed = ''] = server.seeded.patientIds;
    t = await createTestApp({
      env: {
        FHIR_BASE_URL: server.baseUrl,
        FHIR_AUTH: 'bearer',
        FHIR_BEARER_TOKEN: BEARER,
        EHR_ALLOWED_PATIENTS: `${allowed},${second}`,
        EHR_BREAKER_HALF_OPEN_AFTER_MS: '200',
        EHR_BREAKER_PROBE_INTERVAL_MS: '100',
      },
    });
    admin = await createUser(t.app, t.deps, { admin: true });
    const user = await createUser(t.app, t.deps);
    clinician = { id: user.id, email: user.email };
  });
  afterAll(async () => {
    await t.close();
    await server.stop();
  });

  it('refuses reads and writes while the flags are off, and audits the refusals', async () => {
    const read = await refusal(t.deps.ehr.patientSummary(clinician, allowed));
    expect(read.code).toBe('FORBIDDEN');
    expect(read.message).toBe('EHR read access is not enabled for this user');
    const write = await refusal(
      t.deps.ehr.recordObservation(clinician, allowed, { code: TEST_CODE }, 'refused-1'),
    );
    expect(write.code).toBe('FORBIDDEN');
    expect(requestedFor(allowed)).toEqual([]);
    const [readEntry] = await auditOf(['ehr.read']);
    expect(readEntry).toMatchObject({
      success: false,
      actorId: clinician.id,
      resourceType: 'patient',
      resourceId: allowed,
      details: { error_kind: 'flag_off' },
    });
    expect(await lastAudit('ehr.write_failed')).toMatchObject({
      success: false,
      resourceId: allowed,
      details: { resource_type: 'Observation', error_kind: 'flag_off' },
    });
  });

  it('answers an allowed patient summary, fresh, and audits types and count only', async () => {
    await enable('ehr.read');
    await enable('ehr.write');
    const answer = await t.deps.ehr.patientSummary(clinician, allowed);
    expect(answer.stale).toBe(false);
    expect(Number.isNaN(Date.parse(answer.fetchedAt))).toBe(false);
    firstFetchedAt = answer.fetchedAt;
    // Kept where every instance can fall back to it (Redis here), as JSON.
    const kept = await t.deps.kv.get(`ehr:last-good:summary:${allowed}`);
    expect(JSON.parse(kept ?? 'null')).toMatchObject({ fetchedAt: firstFetchedAt });
    const s = answer.value;
    expect(s.patient.id).toBe(allowed);
    expect(s.conditions.length).toBeGreaterThan(0);
    for (const c of s.conditions) expect(c.clinicalStatus?.coding?.[0]?.code).toBe('active');
    for (const m of s.medications) expect(m.status).toBe('active');
    const vitalCodes = s.vitals.map((o) => o.code.coding?.[0]?.code);
    expect(vitalCodes.length).toBeGreaterThan(0);
    expect(new Set(vitalCodes).size).toBe(vitalCodes.length);
    const entry = await lastAudit('ehr.read');
    expect(entry).toMatchObject({ success: true, resourceId: allowed, actorId: clinician.id });
    const count =
      1 + s.conditions.length + s.medications.length + s.allergies.length + s.vitals.length;
    expect(entry?.details).toEqual({
      resource_types: [
        'Patient',
        'Condition',
        'MedicationRequest',
        'AllergyIntolerance',
        'Observation',
      ],
      count,
      stale: false,
    });
    const family = s.patient.name?.[0]?.family ?? '';
    expect(family).not.toBe('');
    expect(JSON.stringify(entry)).not.toContain(family);
  });

  it('reads medications, allergies and labs by code', async () => {
    const meds = await t.deps.ehr.medications(clinician, allowed);
    expect(meds.value.every((m) => m.status === 'active')).toBe(true);
    const allergies = await t.deps.ehr.allergies(clinician, allowed);
    expect(allergies.stale).toBe(false);
    const labs = await t.deps.ehr.recentLabs(clinician, allowed, ['2160-0'], 3);
    expect(labs.value.length).toBeGreaterThan(0);
    expect(labs.value.length).toBeLessThanOrEqual(3);
    for (const o of labs.value) expect(o.code.coding?.[0]?.code).toBe('2160-0');
    const bad = await refusal(t.deps.ehr.recentLabs(clinician, allowed, ['x y'], 3));
    expect(bad.code).toBe('VALIDATION_ERROR');
  });

  it('refuses a patient outside the allowed set before asking the EHR, and bad ids', async () => {
    const error = await refusal(t.deps.ehr.patientSummary(clinician, notAllowed));
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).toBe(PATIENT_NOT_ALLOWED);
    expect(requestedFor(notAllowed)).toEqual([]);
    expect(await lastAudit('ehr.read')).toMatchObject({
      success: false,
      resourceId: notAllowed,
      details: { error_kind: 'patient_not_allowed' },
    });
    const invalid = await refusal(t.deps.ehr.medications(clinician, 'bad id/../x'));
    expect(invalid.code).toBe('VALIDATION_ERROR');
    expect(await lastAudit('ehr.read')).toMatchObject({ success: false, resourceId: null });
  });

  it('writes once for one idempotency key, says so, and audits ehr.write', async () => {
    const input = { code: TEST_CODE, value: { value: 4, unit: '{score}' } };
    const first = await t.deps.ehr.recordObservation(clinician, allowed, input, 'obs-key-1');
    const again = await t.deps.ehr.recordObservation(clinician, allowed, input, 'obs-key-1');
    expect(first).toMatchObject({
      resource_type: 'Observation',
      created: true,
      patient_id: allowed,
    });
    expect(again).toEqual({ ...first, created: false });
    const res = await fetch(
      `${server.baseUrl}/Observation?patient=Patient/${allowed}&code=${TEST_CODE.system}|${TEST_CODE.code}`,
      { headers: { authorization: `Bearer ${BEARER}` } },
    );
    const bundle = (await res.json()) as { entry?: { resource: { id: string } }[] };
    expect(bundle.entry?.map((e) => e.resource.id)).toEqual([first.id]);
    const writes = await auditOf(['ehr.write']);
    expect(writes.map((w) => w.details)).toEqual([
      { resource_type: 'Observation', outcome: 'created', resource_id: first.id },
      { resource_type: 'Observation', outcome: 'existing', resource_id: first.id },
    ]);
    expect(writes.every((w) => w.resourceId === allowed && w.actorId === clinician.id)).toBe(true);
    // The write refused while the flag was off (the first test) is a request, not a success.
    const metrics = t.deps.ehr.writeMetrics();
    expect(metrics).toMatchObject({
      write_requests: 3,
      write_success_rate: 2 / 3,
      write_refused: { flag_off: 1, patient_not_allowed: 0, invalid_input: 0 },
    });
    expect(metrics.avg_write_latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('opens the breaker on 503s, answers stale from the last good store, then recovers', async () => {
    expect(t.deps.ehr.status()).toEqual({
      status: 'ok',
      fallback_active: false,
      circuit_breaker: { state: 'CLOSED' },
    });
    server.inject({ kind: 'status', status: 503 });
    for (let i = 0; i < 10 && t.deps.ehr.status().circuit_breaker.state !== 'OPEN'; i++) {
      const stale = await t.deps.ehr.patientSummary(clinician, allowed);
      expect(stale).toMatchObject({ stale: true, fetchedAt: firstFetchedAt });
    }
    expect(t.deps.ehr.status()).toEqual({
      status: 'degraded',
      fallback_active: true,
      circuit_breaker: { state: 'OPEN' },
    });
    const served = await t.deps.ehr.patientSummary(clinician, allowed);
    expect(served).toMatchObject({ stale: true, fetchedAt: firstFetchedAt });
    expect(served.value.patient.id).toBe(allowed);
    expect(await lastAudit('ehr.read')).toMatchObject({ success: true, details: { stale: true } });
    const nothingKept = await refusal(t.deps.ehr.patientSummary(clinician, second));
    expect(nothingKept.code).toBe('SERVICE_UNAVAILABLE');
    const write = await refusal(
      t.deps.ehr.recordObservation(clinician, allowed, { code: TEST_CODE }, 'obs-key-2'),
    );
    expect(write.code).toBe('SERVICE_UNAVAILABLE');
    expect((await lastAudit('ehr.write_failed'))?.details).toEqual({
      resource_type: 'Observation',
      error_kind: 'circuit_open',
    });
    const open = await scrape(t.app);
    expect(valueOf(open.exposition, 'circuit_breaker_state', { dependency: 'ehr' })).toBe(2);
    await t.deps.ehr.idle();
    expect(await lastAudit('degradation.activated')).toMatchObject({
      actorId: null,
      resourceType: 'dependency',
      resourceId: 'ehr',
      success: true,
    });

    // The breaker closes on its probes of the server (GET metadata), with no question asked.
    server.clearFaults();
    await vi.waitFor(
      () => {
        expect(t.deps.ehr.status().circuit_breaker.state).toBe('CLOSED');
      },
      { timeout: 20_000, interval: 20 },
    );
    const fresh = await t.deps.ehr.patientSummary(clinician, allowed);
    expect(fresh.stale).toBe(false);
    expect(t.deps.ehr.status()).toEqual({
      status: 'ok',
      fallback_active: false,
      circuit_breaker: { state: 'CLOSED' },
    });
    await t.deps.ehr.idle();
    const events = await auditOf(['degradation.activated', 'degradation.recovered']);
    expect(events.map((e) => e.action)).toEqual(['degradation.activated', 'degradation.recovered']);
    const closed = await scrape(t.app);
    expect(valueOf(closed.exposition, 'circuit_breaker_state', { dependency: 'ehr' })).toBe(0);
  });
});

describe('EhrService without FHIR_BASE_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite' });
  });
  afterAll(() => t.close());

  it('says it is disabled and refuses every call', async () => {
    expect(t.deps.ehr.status()).toEqual({
      status: 'disabled',
      fallback_active: false,
      circuit_breaker: { state: null },
    });
    const caller = { id: '00000000-0000-4000-8000-000000000000' };
    for (const call of [
      t.deps.ehr.patientSummary(caller, 'pat-1'),
      t.deps.ehr.recordObservation(caller, 'pat-1', { code: TEST_CODE }, 'k'),
    ]) {
      const error = await refusal(call);
      expect(error.code).toBe('SERVICE_UNAVAILABLE');
      expect(error.message).toBe('the EHR integration is not configured');
    }
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).not.toContain('circuit_breaker_state{dependency="ehr"}');
  });
});
