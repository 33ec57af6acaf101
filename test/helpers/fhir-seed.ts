import type {
  AllergyIntolerance,
  Condition,
  Encounter,
  MedicationRequest,
  Observation,
  Patient,
  Resource,
} from '@medplum/fhirtypes';
import {
  ALLERGENS,
  CATEGORY_SYSTEM,
  CONDITIONS,
  DAY_MS,
  FAMILY,
  GIVEN,
  LABS,
  LOINC,
  MEDICATIONS,
  MRN_SYSTEM,
  Prng,
  RXNORM,
  SNOMED,
  UCUM,
  cc,
  type Coded,
} from './fhir-codes.js';

export { LOINC, MRN_SYSTEM, SNOMED, RXNORM, UCUM } from './fhir-codes.js';

/** How much each seeded patient gets; tests derive expected counts from this. */
export const SEED_SHAPE = {
  /** Each visit is an Encounter with four vital-signs Observations (HR, BP, weight, temperature). */
  vitalVisits: 12,
  /** Each draw is four laboratory Observations (creatinine, HbA1c, potassium, LDL). */
  labDraws: 6,
  conditions: 3,
  medications: 3,
  allergies: 2,
} as const;

export interface SeedResult {
  patientIds: string[];
  resources: Resource[];
}

/**
 * Generates R4 resources for `patients` patients, deterministic for a given `seed` (dates are
 * relative to `today`, a UTC midnight, and spread over the two years before it).
 */
export function generateSeed(patients: number, seed: number, today: Date): SeedResult {
  const rng = new Prng(seed);
  const resources: Resource[] = [];
  const patientIds: string[] = [];
  for (let i = 0; i < patients; i++) {
    const patient = makePatient(rng, i);
    patientIds.push(patient.id ?? '');
    resources.push(patient, ...makeClinical(rng, patient.id ?? '', today.getTime()));
  }
  return { patientIds, resources };
}

function makePatient(rng: Prng, index: number): Patient {
  const id = `pat-${rng.hex(12)}`;
  const year = rng.int(1940, 2000);
  return {
    resourceType: 'Patient',
    id,
    identifier: [
      { system: MRN_SYSTEM, value: `MRN${String(100000 + index * 7919 + rng.int(0, 7918))}` },
    ],
    name: [{ use: 'official', family: rng.pick(FAMILY), given: [rng.pick(GIVEN)] }],
    gender: rng.pick(['female', 'male'] as const),
    birthDate: `${year}-${pad(rng.int(1, 12))}-${pad(rng.int(1, 28))}`,
  };
}

function makeClinical(rng: Prng, patientId: string, todayMs: number): Resource[] {
  const subject = { reference: `Patient/${patientId}` };
  const at = (): string =>
    new Date(todayMs - rng.int(1, 729) * DAY_MS - rng.int(0, 86_399) * 1000).toISOString();
  const out: Resource[] = [];
  for (let v = 0; v < SEED_SHAPE.vitalVisits; v++) {
    const start = at();
    const encounter: Encounter = {
      resourceType: 'Encounter',
      id: `enc-${rng.hex(12)}`,
      status: 'finished',
      class: {
        system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode',
        code: 'AMB',
        display: 'ambulatory',
      },
      subject,
      period: { start, end: new Date(Date.parse(start) + rng.int(15, 60) * 60_000).toISOString() },
    };
    out.push(
      encounter,
      ...vitals(rng, subject, { reference: `Encounter/${encounter.id ?? ''}` }, start),
    );
  }
  for (let d = 0; d < SEED_SHAPE.labDraws; d++) {
    const when = at();
    for (const lab of LABS) {
      const value = rng.real(lab.min, lab.max, lab.dp);
      out.push(
        observation(rng, subject, 'laboratory', lab, when, {
          value,
          unit: lab.unit,
          system: UCUM,
          code: lab.unit,
        }),
      );
    }
  }
  out.push(
    ...conditions(rng, subject, at),
    ...medications(rng, subject, at),
    ...allergies(rng, subject, at),
  );
  return out;
}

interface Ref {
  reference: string;
}
type Quantity = NonNullable<Observation['valueQuantity']>;

function observation(
  rng: Prng,
  subject: Ref,
  category: string,
  code: Coded,
  when: string,
  value?: Quantity,
): Observation {
  const obs: Observation = {
    resourceType: 'Observation',
    id: `obs-${rng.hex(12)}`,
    status: 'final',
    category: [{ coding: [{ system: CATEGORY_SYSTEM, code: category }] }],
    code: cc(LOINC, code),
    subject,
    effectiveDateTime: when,
  };
  if (value !== undefined) obs.valueQuantity = value;
  return obs;
}

function vitals(rng: Prng, subject: Ref, encounter: Ref, when: string): Observation[] {
  const q = (value: number, unit: string, code = unit): Quantity => ({
    value,
    unit,
    system: UCUM,
    code,
  });
  const hr = { code: '8867-4', display: 'Heart rate' };
  const bp = { code: '85354-9', display: 'Blood pressure panel with all children optional' };
  const weight = { code: '29463-7', display: 'Body weight' };
  const temp = { code: '8310-5', display: 'Body temperature' };
  const pressure = observation(rng, subject, 'vital-signs', bp, when);
  pressure.component = [
    {
      code: cc(LOINC, { code: '8480-6', display: 'Systolic blood pressure' }),
      valueQuantity: q(rng.int(100, 170), 'mm[Hg]'),
    },
    {
      code: cc(LOINC, { code: '8462-4', display: 'Diastolic blood pressure' }),
      valueQuantity: q(rng.int(60, 100), 'mm[Hg]'),
    },
  ];
  const list = [
    observation(rng, subject, 'vital-signs', hr, when, q(rng.int(52, 110), 'beats/minute', '/min')),
    pressure,
    observation(rng, subject, 'vital-signs', weight, when, q(rng.real(48, 120, 1), 'kg')),
    observation(rng, subject, 'vital-signs', temp, when, q(rng.real(36.1, 38.6, 1), 'Cel')),
  ];
  for (const o of list) o.encounter = encounter;
  return list;
}

function conditions(rng: Prng, subject: Ref, at: () => string): Condition[] {
  return rng.sample(CONDITIONS, SEED_SHAPE.conditions).map((c) => ({
    resourceType: 'Condition',
    id: `cond-${rng.hex(12)}`,
    clinicalStatus: {
      coding: [
        {
          system: 'http://terminology.hl7.org/CodeSystem/condition-clinical',
          code: rng.pick(['active', 'active', 'resolved'] as const),
        },
      ],
    },
    verificationStatus: {
      coding: [
        { system: 'http://terminology.hl7.org/CodeSystem/condition-ver-status', code: 'confirmed' },
      ],
    },
    code: cc(SNOMED, c),
    subject,
    onsetDateTime: at(),
  }));
}

function medications(rng: Prng, subject: Ref, at: () => string): MedicationRequest[] {
  return rng.sample(MEDICATIONS, SEED_SHAPE.medications).map((m) => ({
    resourceType: 'MedicationRequest',
    id: `med-${rng.hex(12)}`,
    status: rng.pick(['active', 'active', 'stopped'] as const),
    intent: 'order',
    medicationCodeableConcept: cc(RXNORM, m),
    subject,
    authoredOn: at(),
    dosageInstruction: [{ text: m.dose }],
  }));
}

function allergies(rng: Prng, subject: Ref, at: () => string): AllergyIntolerance[] {
  return rng.sample(ALLERGENS, SEED_SHAPE.allergies).map((a) => ({
    resourceType: 'AllergyIntolerance',
    id: `alg-${rng.hex(12)}`,
    clinicalStatus: {
      coding: [
        {
          system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical',
          code: 'active',
        },
      ],
    },
    code: cc(SNOMED, a),
    criticality: rng.pick(['low', 'high', 'unable-to-assess'] as const),
    patient: subject,
    recordedDate: at(),
    reaction: [
      {
        manifestation: [cc(SNOMED, a.reaction)],
        severity: rng.pick(['mild', 'moderate', 'severe'] as const),
      },
    ],
  }));
}

const pad = (n: number): string => String(n).padStart(2, '0');
