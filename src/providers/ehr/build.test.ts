import { describe, expect, it } from 'vitest';
import { buildObservation } from './build.js';
import type { ObservationInput } from './types.js';

const identifier = { system: 'urn:test', value: 'abc' };
const NOW = Date.parse('2026-01-02T03:04:05.000Z');
const LOINC = 'http://loinc.org';

const build = (input: Partial<ObservationInput>) =>
  buildObservation(
    { idempotencyKey: 'k', patientId: 'pat-1', code: { system: LOINC, code: '8867-4' }, ...input },
    identifier,
    NOW,
  );
const rejected = (input: Partial<ObservationInput>) => {
  try {
    build(input);
  } catch (error) {
    return (error as { kind?: string; message?: string }).message;
  }
  throw new Error('expected a refusal');
};

describe('buildObservation: vital signs under their FHIR R4 profiles', () => {
  it('writes a vital sign with the vital-signs category and its profile, whatever was asked', () => {
    const hr = build({ value: { value: 72, unit: '/min' } });
    expect(hr).toMatchObject({
      meta: { profile: ['http://hl7.org/fhir/StructureDefinition/heartrate'] },
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
      code: { coding: [{ system: LOINC, code: '8867-4', display: 'Heart rate' }] },
      subject: { reference: 'Patient/pat-1' },
      effectiveDateTime: '2026-01-02T03:04:05.000Z',
      valueQuantity: { value: 72, unit: '/min', system: 'http://unitsofmeasure.org', code: '/min' },
    });
  });

  it("puts the profile's code before a more specific one", () => {
    const spo2 = build({
      code: { system: LOINC, code: '59408-5' },
      value: { value: 97, unit: '%' },
    });
    expect(spo2.code.coding?.map((c) => c.code)).toEqual(['2708-6', '59408-5']);
  });

  it('writes a blood pressure as one panel with its two components and no value', () => {
    const mmHg = (value: number) => ({ value, unit: 'mm[Hg]' });
    const bp = build({
      code: { system: LOINC, code: '85354-9' },
      // Given in either order, written in the profile's.
      components: [
        { code: { system: LOINC, code: '8462-4' }, value: mmHg(80) },
        { code: { system: LOINC, code: '8480-6' }, value: mmHg(120) },
      ],
    });
    expect(bp.valueQuantity).toBeUndefined();
    expect(bp.component?.map((c) => [c.code.coding?.[0]?.code, c.valueQuantity?.value])).toEqual([
      ['8480-6', 120],
      ['8462-4', 80],
    ]);
  });

  it('refuses what would not fit the profile', () => {
    expect(rejected({ value: { value: 72, unit: 'bpm' } })).toBe(
      'unit not allowed for LOINC 8867-4',
    );
    expect(rejected({})).toBe('LOINC 8867-4 is written with one quantity');
    expect(rejected({ value: { text: 'fast' } })).toBe('LOINC 8867-4 is written with one quantity');
    expect(rejected({ category: 'laboratory', value: { value: 72, unit: '/min' } })).toBe(
      'LOINC 8867-4 is a vital sign',
    );
    expect(
      rejected({
        code: { system: LOINC, code: '85354-9' },
        components: [
          { code: { system: LOINC, code: '8480-6' }, value: { value: 1, unit: 'mm[Hg]' } },
        ],
      }),
    ).toBe('LOINC 85354-9 is written with components 8480-6 and 8462-4');
    expect(
      rejected({
        code: { system: LOINC, code: '72514-3' },
        category: 'vital-signs',
        value: { value: 3, unit: '{score}' },
      }),
    ).toBe('not a vital sign with a FHIR R4 profile');
  });

  it('writes other codes as asked: a laboratory result with its category, others with none', () => {
    const lab = build({
      code: { system: LOINC, code: '2160-0' },
      category: 'laboratory',
      value: { value: 1.1, unit: 'mg/dL' },
    });
    expect(lab.category?.[0]?.coding?.[0]?.code).toBe('laboratory');
    expect(lab.meta).toBeUndefined();
    const other = build({ code: { system: 'urn:test', code: 'pain' } });
    expect(other.category).toBeUndefined();
    expect(other.valueQuantity).toBeUndefined();
  });
});
