import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, exportJWK, generateKeyPair, type JWK } from 'jose';
import { EhrError } from '../src/providers/ehr/errors.js';
import { FhirEhrProvider } from '../src/providers/ehr/fhir.js';
import type { FhirEhrOptions } from '../src/providers/ehr/types.js';
import { FhirTestServer } from './helpers/fhir-server.js';
import { SEED_SHAPE } from './helpers/fhir-seed.js';

const BEARER = 'static-test-token';

/** The error a promise rejects with (fails the test when it resolves). */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

async function ehrFailure(promise: Promise<unknown>): Promise<EhrError> {
  const error = await failure(promise);
  expect(error).toBeInstanceOf(EhrError);
  return error as EhrError;
}

const fhirRequests = (server: FhirTestServer, type?: string): URL[] =>
  server.requests
    .map((r) => new URL(r.url, server.baseUrl))
    .filter(
      (u) =>
        u.pathname.includes('/fhir/') && (type === undefined || u.pathname.endsWith(`/${type}`)),
    );

const codeOf = (o: { code?: { coding?: { code?: string }[] } }): string | undefined =>
  o.code?.coding?.[0]?.code;
const categoryOf = (o: { category?: { coding?: { code?: string }[] }[] }): string | undefined =>
  o.category?.[0]?.coding?.[0]?.code;

describe('FhirEhrProvider with a static bearer token', () => {
  let server: FhirTestServer;
  let patientId: string;
  const provider = (extra: Partial<FhirEhrOptions> = {}): FhirEhrProvider =>
    new FhirEhrProvider({
      baseUrl: server.baseUrl,
      auth: { kind: 'bearer', token: BEARER },
      ...extra,
    });

  beforeAll(async () => {
    server = await FhirTestServer.start({
      auth: { bearer: BEARER },
      seed: { patients: 2, seed: 13 },
    });
    patientId = server.seeded.patientIds[0] ?? '';
  });
  afterEach(() => {
    server.clearFaults();
  });
  afterAll(() => server.stop());

  it('reads a patient, asking only for the elements it uses', async () => {
    const patient = await provider().getPatient(patientId);
    expect(patient).toMatchObject({ resourceType: 'Patient', id: patientId });
    expect(patient.name?.length).toBeGreaterThan(0);
    const [read] = fhirRequests(server, `Patient/${patientId}`).slice(-1);
    expect(read?.searchParams.get('_elements')).toContain('birthDate');
    expect(server.requests.at(-1)?.headers.authorization).toBe(`Bearer ${BEARER}`);
  });

  it('pages through Bundle.link next until the limit, newest first', async () => {
    const before = fhirRequests(server, 'Observation').length;
    const found = await provider({ pageSize: 7 }).searchObservations({ patientId, limit: 20 });
    expect(found).toHaveLength(20);
    expect(new Set(found.map((o) => o.id)).size).toBe(20);
    for (const o of found) expect(o.subject?.reference).toBe(`Patient/${patientId}`);
    const dates = found.map((o) => o.effectiveDateTime ?? '');
    expect([...dates].sort().reverse()).toEqual(dates);
    const sent = fhirRequests(server, 'Observation').slice(before);
    expect(sent).toHaveLength(3);
    for (const url of sent) {
      expect(url.searchParams.get('_count')).toBe('7');
      expect(url.searchParams.get('_elements')).toContain('value');
      expect(url.searchParams.get('_sort')).toBe('-date');
    }
  });

  it('stops at the end of the results and never beyond the page cap', async () => {
    const all = await provider().searchObservations({ patientId, limit: 1000 });
    expect(all.length).toBe(SEED_SHAPE.vitalVisits * 4 + SEED_SHAPE.labDraws * 4);
    const before = fhirRequests(server, 'Observation').length;
    const capped = await provider({ pageSize: 2, maxPages: 3 }).searchObservations({
      patientId,
      limit: 100,
    });
    expect(capped).toHaveLength(6);
    expect(fhirRequests(server, 'Observation').length - before).toBe(3);
  });

  it('filters observations by category, LOINC code and date', async () => {
    const ehr = provider();
    const labs = await ehr.searchObservations({
      patientId,
      category: 'laboratory',
      code: '2160-0',
      limit: 100,
    });
    expect(labs).toHaveLength(SEED_SHAPE.labDraws);
    for (const o of labs) {
      expect(codeOf(o)).toBe('2160-0');
      expect(typeof o.valueQuantity?.value).toBe('number');
    }
    const vitals = await ehr.searchObservations({
      patientId,
      category: 'vital-signs',
      code: ['8867-4', '8310-5'],
      limit: 100,
    });
    expect(vitals).toHaveLength(SEED_SHAPE.vitalVisits * 2);
    expect(new Set(vitals.map(codeOf))).toEqual(new Set(['8867-4', '8310-5']));
    expect(new Set(vitals.map(categoryOf))).toEqual(new Set(['vital-signs']));
    const dates = labs.map((o) => new Date(o.effectiveDateTime ?? ''));
    const [newest, , middle] = dates as [Date, Date, Date];
    const ranged = await ehr.searchObservations({
      patientId,
      code: '2160-0',
      since: middle,
      until: newest,
      limit: 100,
    });
    expect(ranged.map((o) => o.id)).toEqual(labs.slice(0, 3).map((o) => o.id));
  });

  it('reads conditions, medications, allergies and encounters of the patient', async () => {
    const ehr = provider();
    const conditions = await ehr.conditions(patientId);
    expect(conditions).toHaveLength(SEED_SHAPE.conditions);
    const meds = await ehr.medicationRequests(patientId, { activeOnly: false });
    expect(meds).toHaveLength(SEED_SHAPE.medications);
    const active = await ehr.medicationRequests(patientId, { activeOnly: true });
    expect(active.every((m) => m.status === 'active')).toBe(true);
    expect(active.length).toBeLessThanOrEqual(meds.length);
    const allergies = await ehr.allergies(patientId);
    expect(allergies).toHaveLength(SEED_SHAPE.allergies);
    expect(allergies.every((a) => a.patient.reference === `Patient/${patientId}`)).toBe(true);
    const encounters = await ehr.encounters(patientId, 5);
    expect(encounters).toHaveLength(5);
    expect(encounters.every((e) => e.subject?.reference === `Patient/${patientId}`)).toBe(true);
    for (const type of ['Condition', 'MedicationRequest', 'AllergyIntolerance', 'Encounter']) {
      const [last] = fhirRequests(server, type).slice(-1);
      expect(last?.searchParams.get('_count')).not.toBeNull();
      expect(last?.searchParams.get('_elements')).not.toBeNull();
      expect(last?.searchParams.get('patient')).toBe(`Patient/${patientId}`);
    }
  });

  it('refuses an invalid patient id before sending anything', async () => {
    const ehr = provider();
    const before = server.requests.length;
    for (const bad of ['', '../Patient', 'a/b', 'x?_id=y', 'p&patient=q', 'a b', 'x'.repeat(65)]) {
      expect((await ehrFailure(ehr.getPatient(bad))).kind).toBe('rejected');
      expect((await ehrFailure(ehr.allergies(bad))).kind).toBe('rejected');
      expect((await ehrFailure(ehr.searchObservations({ patientId: bad, limit: 5 }))).kind).toBe(
        'rejected',
      );
    }
    expect(server.requests.length).toBe(before);
  });

  it('writes an Observation once however often the write is sent', async () => {
    const ehr = provider();
    const input = {
      idempotencyKey: 'conv-1:turn-4:bp',
      patientId,
      category: 'vital-signs' as const,
      code: { system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' },
      value: { value: 72, unit: '/min' },
    };
    const first = await ehr.createObservation(input);
    expect(first.created).toBe(true);
    const posted = server.requests.at(-1);
    expect(posted?.headers['if-none-exist']).toContain('identifier=');
    const second = await ehr.createObservation(input);
    expect(second).toEqual({ ...first, created: false });
    const search = new URL(`${server.baseUrl}/Observation`);
    search.searchParams.set('identifier', `${first.identifier.system}|${first.identifier.value}`);
    const bundle = (await (
      await fetch(search, { headers: { authorization: `Bearer ${BEARER}` } })
    ).json()) as {
      entry?: unknown[];
    };
    expect(bundle.entry).toHaveLength(1);
    const heartRates = await ehr.searchObservations({ patientId, code: '8867-4', limit: 100 });
    expect(heartRates.filter((o) => o.id === first.id)).toHaveLength(1);
  });

  it('writes a summary note as a DocumentReference once', async () => {
    const ehr = provider();
    const note = {
      idempotencyKey: 'conv-1:summary',
      patientId,
      text: 'Discussed blood pressure trend.',
    };
    const first = await ehr.createDocumentReference(note);
    const second = await ehr.createDocumentReference(note);
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    expect(second.id).toBe(first.id);
    const other = await ehr.createDocumentReference({ ...note, idempotencyKey: 'conv-2:summary' });
    expect(other.created).toBe(true);
    expect(other.id).not.toBe(first.id);
  });

  it('maps server faults to error kinds', async () => {
    const ehr = provider({ timeoutMs: 10_000 });
    server.inject({ kind: 'status', status: 503, times: 1 });
    const down = await ehrFailure(ehr.getPatient(patientId));
    expect(down).toMatchObject({ kind: 'unavailable', status: 503, retryable: true });
    server.inject({ kind: 'hang', times: 1 });
    const impatient = provider({ timeoutMs: 200 });
    expect(await ehrFailure(impatient.conditions(patientId))).toMatchObject({
      kind: 'timeout',
      retryable: true,
    });
    server.inject({ kind: 'malformed', times: 1 });
    expect(await ehrFailure(ehr.getPatient(patientId))).toMatchObject({
      kind: 'malformed',
      retryable: false,
    });
    server.inject({ kind: 'malformed', shape: 'not-a-resource', times: 1 });
    expect((await ehrFailure(ehr.searchObservations({ patientId, limit: 5 }))).kind).toBe(
      'malformed',
    );
    server.inject({ kind: 'status', status: 404, times: 1 });
    expect(await ehrFailure(ehr.allergies(patientId))).toMatchObject({
      kind: 'not_found',
      status: 404,
    });
    expect((await ehrFailure(ehr.getPatient('no-such-patient'))).kind).toBe('not_found');
    server.inject({ kind: 'status', status: 422, times: 1 });
    expect((await ehrFailure(ehr.encounters(patientId, 3))).kind).toBe('rejected');
    server.inject({ kind: 'delay', ms: 50, times: 1 });
    expect((await ehr.getPatient(patientId)).id).toBe(patientId);
  });

  it('never marks a failed write retryable, and carries no resource content', async () => {
    const ehr = provider();
    server.inject({ kind: 'status', status: 502, times: 1 });
    const note = { idempotencyKey: 'conv-9:summary', patientId, text: 'SECRET-NOTE-TEXT' };
    const error = await ehrFailure(ehr.createDocumentReference(note));
    expect(error).toMatchObject({ kind: 'unavailable', status: 502, retryable: false });
    const { kind, status, retryable, message, cause } = error;
    expect(JSON.stringify({ kind, status, retryable, message, cause })).not.toContain('SECRET');
    expect(error.message).not.toContain(patientId);
  });

  it('refuses a next link that leaves the FHIR server, so the token never goes elsewhere', async () => {
    const sentTo: string[] = [];
    const rewriting: typeof fetch = async (input, init) => {
      sentTo.push(input instanceof Request ? input.url : input.toString());
      const response = await fetch(input, init);
      const text = (await response.text()).replaceAll(
        server.baseUrl,
        'http://elsewhere.invalid/fhir/R4',
      );
      return new Response(text, { status: response.status, headers: response.headers });
    };
    const ehr = provider({ fetch: rewriting, pageSize: 2 });
    expect((await ehrFailure(ehr.searchObservations({ patientId, limit: 10 }))).kind).toBe(
      'malformed',
    );
    expect(sentTo).toHaveLength(1);
  });

  it('refuses a wrong static token without retrying', async () => {
    const before = fhirRequests(server).length;
    const ehr = new FhirEhrProvider({
      baseUrl: server.baseUrl,
      auth: { kind: 'bearer', token: 'wrong' },
    });
    expect(await ehrFailure(ehr.getPatient(patientId))).toMatchObject({
      kind: 'unauthorized',
      status: 401,
    });
    expect(fhirRequests(server).length - before).toBe(1);
  });

  it('stops when the caller aborts', async () => {
    const ehr = provider({ timeoutMs: 10_000 });
    const before = server.requests.length;
    const aborted = new AbortController();
    aborted.abort(new Error('cancelled before'));
    expect(await failure(ehr.getPatient(patientId, { signal: aborted.signal }))).toMatchObject({
      message: 'cancelled before',
    });
    expect(server.requests.length).toBe(before);

    server.inject({ kind: 'hang', times: 1 });
    const controller = new AbortController();
    const pending = ehr.searchObservations({ patientId, limit: 5 }, { signal: controller.signal });
    while (server.requests.length === before)
      await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error('barge-in'));
    const error = await failure(pending);
    expect(error).not.toBeInstanceOf(EhrError);
    expect(error).toMatchObject({ message: 'barge-in' });
  });
});

describe('FhirEhrProvider with SMART backend services', () => {
  const clientId = 'assistant-backend';
  let privateJwk: JWK;
  let publicJwk: JWK;
  let server: FhirTestServer;
  let patientId: string;

  const provider = (target: FhirTestServer): FhirEhrProvider =>
    new FhirEhrProvider({
      baseUrl: target.baseUrl,
      auth: {
        kind: 'smart',
        tokenUrl: target.tokenUrl,
        clientId,
        privateJwk,
        scope: 'system/*.rs',
        keyId: 'k1',
      },
      timeoutMs: 5000,
    });

  beforeAll(async () => {
    const keys = await generateKeyPair('RS384', { extractable: true });
    privateJwk = await exportJWK(keys.privateKey);
    publicJwk = await exportJWK(keys.publicKey);
    server = await FhirTestServer.start({
      auth: { smart: { clientId, publicJwk } },
      seed: { patients: 1 },
    });
    patientId = server.seeded.patientIds[0] ?? '';
  });
  afterEach(() => {
    server.clearFaults();
  });
  afterAll(() => server.stop());

  it('asks for one token for many calls, concurrent ones included', async () => {
    const ehr = provider(server);
    const issued = server.tokensIssued;
    const patients = await Promise.all(Array.from({ length: 10 }, () => ehr.getPatient(patientId)));
    expect(patients.every((p) => p.id === patientId)).toBe(true);
    await ehr.allergies(patientId);
    await ehr.encounters(patientId, 2);
    expect(server.tokensIssued - issued).toBe(1);
    const tokenRequest = server.requests.find((r) => r.url.endsWith('/auth/token'));
    const form = new URLSearchParams(tokenRequest?.body ?? '');
    expect(form.get('grant_type')).toBe('client_credentials');
    const claims = decodeJwt(form.get('client_assertion') ?? '');
    expect(claims).toMatchObject({ iss: clientId, sub: clientId, aud: server.tokenUrl });
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(300);
    expect(typeof claims.jti).toBe('string');
  });

  it('gets a fresh token once on a 401, and gives up after one refresh', async () => {
    const ehr = provider(server);
    await ehr.getPatient(patientId);
    const issued = server.tokensIssued;
    server.inject({ kind: 'status', status: 401, times: 1 });
    expect((await ehr.getPatient(patientId)).id).toBe(patientId);
    expect(server.tokensIssued - issued).toBe(1);
    const before = fhirRequests(server).length;
    server.inject({ kind: 'status', status: 401, times: 2 });
    expect(await ehrFailure(ehr.getPatient(patientId))).toMatchObject({
      kind: 'unauthorized',
      status: 401,
    });
    expect(server.tokensIssued - issued).toBe(2);
    expect(fhirRequests(server).length - before).toBe(2);
  });

  it('renews a token that expires', async () => {
    const shortLived = await FhirTestServer.start({
      auth: { smart: { clientId, publicJwk, tokenTtlSeconds: 1 } },
      seed: { patients: 1 },
    });
    try {
      const ehr = provider(shortLived);
      const id = shortLived.seeded.patientIds[0] ?? '';
      await ehr.getPatient(id);
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect((await ehr.getPatient(id)).id).toBe(id);
      expect(shortLived.tokensIssued).toBe(2);
      expect(fhirRequests(shortLived)).toHaveLength(2);
      const jtis = shortLived.requests
        .filter((r) => r.url.endsWith('/auth/token'))
        .map((r) => decodeJwt(new URLSearchParams(r.body ?? '').get('client_assertion') ?? '').jti);
      expect(new Set(jtis).size).toBe(2);
    } finally {
      await shortLived.stop();
    }
  });

  it('reports a refused client assertion as unauthorized', async () => {
    const other = await generateKeyPair('RS384', { extractable: true });
    const ehr = new FhirEhrProvider({
      baseUrl: server.baseUrl,
      auth: {
        kind: 'smart',
        tokenUrl: server.tokenUrl,
        clientId,
        privateJwk: await exportJWK(other.privateKey),
        scope: 'system/*.rs',
      },
    });
    const before = fhirRequests(server).length;
    expect(await ehrFailure(ehr.getPatient(patientId))).toMatchObject({
      kind: 'unauthorized',
      status: 401,
    });
    expect(fhirRequests(server).length).toBe(before);
  });
});
