import { randomUUID } from 'node:crypto';
import type { Bundle, Observation, OperationOutcome, Patient, Resource } from '@medplum/fhirtypes';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FhirTestServer } from './helpers/fhir-server.js';
import { LOINC, MRN_SYSTEM, SEED_SHAPE } from './helpers/fhir-seed.js';

const FHIR = 'application/fhir+json';

async function get<T = Resource>(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T; type: string | null }> {
  const res = await fetch(url, { headers: { Accept: FHIR, ...headers } });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    body: (await res.json()) as T,
  };
}

/** Follows Bundle.link next to the end; returns every page. */
async function allPages(url: string, headers: Record<string, string> = {}): Promise<Bundle[]> {
  const pages: Bundle[] = [];
  let next: string | undefined = url;
  while (next !== undefined) {
    const { status, body }: { status: number; body: Bundle } = await get<Bundle>(next, headers);
    expect(status).toBe(200);
    pages.push(body);
    next = body.link?.find((l) => l.relation === 'next')?.url;
  }
  return pages;
}

const entries = <T extends Resource>(pages: Bundle[]): T[] =>
  pages.flatMap((p) => (p.entry ?? []).map((e) => e.resource as T));

describe('FhirTestServer: FHIR R4 semantics', () => {
  let server: FhirTestServer;
  let patientId: string;
  beforeAll(async () => {
    server = await FhirTestServer.start({ seed: { patients: 3, seed: 42 } });
    patientId = server.seeded.patientIds[0] ?? '';
  });
  afterAll(async () => {
    await server.stop();
  });

  it('reads a seeded patient, and answers 404 with an OperationOutcome for an unknown one', async () => {
    expect(server.seeded.patientIds).toHaveLength(3);
    const { status, body, type } = await get<Patient>(`${server.baseUrl}/Patient/${patientId}`);
    expect(status).toBe(200);
    expect(type).toContain(FHIR);
    expect(body).toMatchObject({
      resourceType: 'Patient',
      id: patientId,
      gender: expect.any(String),
    });
    expect(body.name?.[0]?.family).toEqual(expect.any(String));
    expect(body.birthDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(body.identifier?.[0]?.system).toBe(MRN_SYSTEM);
    const missing = await get<OperationOutcome>(`${server.baseUrl}/Patient/does-not-exist`);
    expect(missing.status).toBe(404);
    expect(missing.body.resourceType).toBe('OperationOutcome');
  });

  it('pages a patient+category+code search through next links on this server', async () => {
    const code = encodeURIComponent(`${LOINC}|8867-4`);
    const pages = await allPages(
      `${server.baseUrl}/Observation?patient=${patientId}&category=vital-signs&code=${code}&_count=5`,
    );
    expect(pages).toHaveLength(Math.ceil(SEED_SHAPE.vitalVisits / 5));
    const found = entries<Observation>(pages);
    expect(found).toHaveLength(SEED_SHAPE.vitalVisits);
    expect(new Set(found.map((o) => o.id)).size).toBe(found.length);
    for (const o of found) {
      expect(o.code.coding?.[0]?.code).toBe('8867-4');
      expect(o.subject?.reference).toBe(`Patient/${patientId}`);
      expect(o.valueQuantity).toMatchObject({ system: 'http://unitsofmeasure.org', code: '/min' });
    }
    for (const page of pages) {
      expect(page.total).toBe(SEED_SHAPE.vitalVisits);
      for (const link of page.link ?? [])
        expect(link.url.startsWith(`${server.baseUrl}/Observation?`)).toBe(true);
    }
  });

  it('pages all vital signs with _count=20 and sorts by date', async () => {
    const pages = await allPages(
      `${server.baseUrl}/Observation?patient=Patient/${patientId}&category=vital-signs&_count=20&_sort=date`,
    );
    const expected = SEED_SHAPE.vitalVisits * 4;
    expect(pages).toHaveLength(Math.ceil(expected / 20));
    const found = entries<Observation>(pages);
    expect(found).toHaveLength(expected);
    const dates = found.map((o) => o.effectiveDateTime ?? '');
    expect(dates).toEqual([...dates].sort());
    const bp = found.find((o) => o.code.coding?.[0]?.code === '85354-9');
    expect(bp?.component?.map((c) => c.code.coding?.[0]?.code)).toEqual(['8480-6', '8462-4']);
    const labs = entries<Observation>(
      await allPages(`${server.baseUrl}/Observation?patient=${patientId}&category=laboratory`),
    );
    expect(labs).toHaveLength(SEED_SHAPE.labDraws * 4);
  });

  it('trims with _elements on search and read, tagging SUBSETTED', async () => {
    const { body } = await get<Bundle<Observation>>(
      `${server.baseUrl}/Observation?patient=${patientId}&_elements=code,value&_count=3`,
    );
    expect(body.entry).toHaveLength(3);
    for (const entry of body.entry ?? []) {
      expect(Object.keys(entry.resource ?? {}).sort()).toEqual(
        ['code', 'id', 'meta', 'resourceType', 'valueQuantity']
          .filter((k) => k !== 'valueQuantity' || entry.resource?.valueQuantity !== undefined)
          .sort(),
      );
      expect(entry.resource?.meta?.tag?.map((t) => t.code)).toContain('SUBSETTED');
      expect(entry.fullUrl).toBe(`${server.baseUrl}/Observation/${entry.resource?.id ?? ''}`);
    }
    const read = await get<Patient>(`${server.baseUrl}/Patient/${patientId}?_elements=name`);
    expect(read.body.name).toBeDefined();
    expect(read.body.gender).toBeUndefined();
  });

  it('filters by date with ge and lt', async () => {
    const code = encodeURIComponent(`${LOINC}|4548-4`);
    const base = `${server.baseUrl}/Observation?patient=${patientId}&code=${code}`;
    const all = entries<Observation>(await allPages(base));
    const dates = all.map((o) => o.effectiveDateTime ?? '').sort();
    const cutoff = dates[2] ?? '';
    const ge = entries<Observation>(await allPages(`${base}&date=ge${encodeURIComponent(cutoff)}`));
    expect(ge.map((o) => o.id).sort()).toEqual(
      all
        .filter((o) => (o.effectiveDateTime ?? '') >= cutoff)
        .map((o) => o.id)
        .sort(),
    );
    const lt = entries<Observation>(await allPages(`${base}&date=lt${encodeURIComponent(cutoff)}`));
    expect(lt).toHaveLength(2);
    expect(ge.length + lt.length).toBe(SEED_SHAPE.labDraws);
  });

  it('creates conditionally with If-None-Exist: 201 once, then 200 with the same resource', async () => {
    const patient: Patient = {
      resourceType: 'Patient',
      identifier: [{ system: MRN_SYSTEM, value: 'NEW-1' }],
    };
    const post = () =>
      fetch(`${server.baseUrl}/Patient`, {
        method: 'POST',
        headers: { 'Content-Type': FHIR, 'If-None-Exist': `identifier=${MRN_SYSTEM}|NEW-1` },
        body: JSON.stringify(patient),
      });
    const first = await post();
    expect(first.status).toBe(201);
    const created = (await first.json()) as Patient;
    expect(first.headers.get('location')).toContain(
      `${server.baseUrl}/Patient/${created.id ?? ''}`,
    );
    const second = await post();
    expect(second.status).toBe(200);
    expect(((await second.json()) as Patient).id).toBe(created.id);
    const search = await get<Bundle>(
      `${server.baseUrl}/Patient?identifier=${encodeURIComponent(`${MRN_SYSTEM}|NEW-1`)}`,
    );
    expect(search.body.total).toBe(1);
  });

  it('seeds the other resource types per patient, deterministically from the seed', async () => {
    for (const [type, n] of [
      ['Condition', SEED_SHAPE.conditions],
      ['MedicationRequest', SEED_SHAPE.medications],
      ['AllergyIntolerance', SEED_SHAPE.allergies],
      ['Encounter', SEED_SHAPE.vitalVisits],
    ] as const) {
      const { body } = await get<Bundle>(`${server.baseUrl}/${type}?patient=${patientId}`);
      expect(body.total, type).toBe(n);
    }
    const same = await FhirTestServer.start({ seed: { patients: 3, seed: 42 } });
    const other = await FhirTestServer.start({ seed: { patients: 2, seed: 43 } });
    try {
      expect(same.seeded.patientIds).toEqual(server.seeded.patientIds);
      const a = await get<Patient>(`${server.baseUrl}/Patient/${patientId}`);
      const b = await get<Patient>(`${same.baseUrl}/Patient/${patientId}`);
      expect({ ...b.body, meta: undefined }).toEqual({ ...a.body, meta: undefined });
      expect(other.seeded.patientIds).toHaveLength(2);
      expect(other.seeded.patientIds).not.toContain(patientId);
    } finally {
      await same.stop();
      await other.stop();
    }
  });
});

describe('FhirTestServer: faults', () => {
  let server: FhirTestServer;
  let url: string;
  beforeAll(async () => {
    server = await FhirTestServer.start();
    url = `${server.baseUrl}/Patient/${server.seeded.patientIds[0] ?? ''}`;
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers injected statuses in order, `times` each, then normally', async () => {
    server.inject({ kind: 'status', status: 503, times: 2 });
    server.inject({ kind: 'status', status: 429, times: 1 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await get(url);
      statuses.push(res.status);
      if (res.status !== 200) expect(res.body.resourceType).toBe('OperationOutcome');
    }
    expect(statuses).toEqual([503, 503, 429, 200]);
  });

  it('keeps a fault without `times` until clearFaults', async () => {
    server.inject({ kind: 'status', status: 500 });
    for (let i = 0; i < 3; i++) expect((await fetch(url)).status).toBe(500);
    server.clearFaults();
    expect((await fetch(url)).status).toBe(200);
  });

  it('delays a request but answers it correctly, while later requests go through', async () => {
    server.inject({ kind: 'delay', ms: 1500, times: 1 });
    let settled = false;
    const delayed = get<Patient>(url).finally(() => (settled = true));
    expect((await get<Patient>(url)).status).toBe(200);
    expect(settled).toBe(false);
    const { status, body } = await delayed;
    expect(status).toBe(200);
    expect(body.id).toBe(server.seeded.patientIds[0]);
  });

  it('hangs until the client gives up', async () => {
    server.inject({ kind: 'hang', times: 1 });
    await expect(fetch(url, { signal: AbortSignal.timeout(200) })).rejects.toThrow();
    expect((await fetch(url)).status).toBe(200);
  });

  it('answers malformed bodies: truncated JSON, and entries that are not resources', async () => {
    server.inject({ kind: 'malformed', times: 1 });
    const truncated = await fetch(url);
    expect(truncated.status).toBe(200);
    await expect(truncated.json()).rejects.toThrow();
    server.inject({ kind: 'malformed', times: 1, shape: 'not-a-resource' });
    const bundle = await get<Bundle>(`${server.baseUrl}/Observation?_count=2`);
    expect(bundle.status).toBe(200);
    expect(bundle.body.entry?.length).toBeGreaterThan(0);
    for (const entry of bundle.body.entry ?? [])
      expect(entry.resource?.resourceType).toBeUndefined();
  });
});

describe('FhirTestServer: static bearer auth', () => {
  let server: FhirTestServer;
  beforeAll(async () => {
    server = await FhirTestServer.start({ auth: { bearer: 'secret-token' } });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('refuses requests without the token or with a wrong one, and serves the right one', async () => {
    const url = `${server.baseUrl}/Patient/${server.seeded.patientIds[0] ?? ''}`;
    const none = await get<OperationOutcome>(url);
    expect(none.status).toBe(401);
    expect(none.body.resourceType).toBe('OperationOutcome');
    expect((await get(url, { Authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await get(url, { Authorization: 'Bearer secret-token' })).status).toBe(200);
    expect(server.requests.at(-1)?.headers.authorization).toBe('Bearer secret-token');
    const metadata = await get<{ fhirVersion: string }>(`${server.baseUrl}/metadata`);
    expect(metadata.body.fhirVersion).toBe('4.0.1');
  });
});

describe('FhirTestServer: SMART backend services', () => {
  const clientId = 'ehr-client';
  let server: FhirTestServer;
  let privateKey: CryptoKey;
  let patientUrl: string;

  beforeAll(async () => {
    const pair = await generateKeyPair('RS384', { extractable: true });
    privateKey = pair.privateKey;
    const publicJwk = await exportJWK(pair.publicKey);
    server = await FhirTestServer.start({
      auth: { smart: { clientId, publicJwk, tokenTtlSeconds: 1 } },
    });
    patientUrl = `${server.baseUrl}/Patient/${server.seeded.patientIds[0] ?? ''}`;
  });
  afterAll(async () => {
    await server.stop();
  });

  const assertion = (opts: { key?: CryptoKey; aud?: string; jti?: string; exp?: string } = {}) =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'RS384', typ: 'JWT' })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience(opts.aud ?? server.tokenUrl)
      .setJti(opts.jti ?? randomUUID())
      .setExpirationTime(opts.exp ?? '4m')
      .sign(opts.key ?? privateKey);

  async function requestToken(
    jwt: string,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(server.tokenUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: jwt,
        scope: 'system/*.read',
      }).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it('issues a token for a good assertion that the FHIR endpoint accepts (faults do not touch the token endpoint)', async () => {
    expect((await fetch(patientUrl)).status).toBe(401);
    server.inject({ kind: 'status', status: 500, times: 1 });
    const { status, body } = await requestToken(await assertion());
    server.clearFaults();
    expect(status).toBe(200);
    expect(body).toMatchObject({ token_type: 'bearer', expires_in: 1, scope: 'system/*.read' });
    expect(server.tokensIssued).toBe(1);
    const read = await fetch(patientUrl, {
      headers: { Authorization: `Bearer ${String(body.access_token)}` },
    });
    expect(read.status).toBe(200);
  });

  it('refuses a wrong key, a wrong audience, a reused jti and a far exp', async () => {
    const before = server.tokensIssued;
    const other = await generateKeyPair('RS384');
    const wrongKey = await requestToken(await assertion({ key: other.privateKey }));
    expect(wrongKey).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    expect((await requestToken(await assertion({ aud: `${server.baseUrl}/token` }))).status).toBe(
      401,
    );
    const jti = randomUUID();
    expect((await requestToken(await assertion({ jti }))).status).toBe(200);
    expect((await requestToken(await assertion({ jti }))).status).toBe(401);
    expect((await requestToken(await assertion({ exp: '10m' }))).status).toBe(401);
    expect(server.tokensIssued).toBe(before + 1);
    const form = await fetch(server.tokenUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=password',
    });
    expect(form.status).toBe(400);
    expect(((await form.json()) as { error: string }).error).toBe('unsupported_grant_type');
  });

  it('refuses a token once it has expired, and an unknown token', async () => {
    const { body } = await requestToken(await assertion());
    const auth = { Authorization: `Bearer ${String(body.access_token)}` };
    expect((await fetch(patientUrl, { headers: auth })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const expired = await fetch(patientUrl, { headers: auth });
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('invalid_token');
    expect((await fetch(patientUrl, { headers: { Authorization: 'Bearer made-up' } })).status).toBe(
      401,
    );
  });
});
