import type {
  AllergyIntolerance,
  CodeableConcept,
  Condition,
  MedicationRequest,
  Observation,
  Patient,
  Quantity,
} from '@medplum/fhirtypes';
import type { Labelled } from '../../../providers/ehr/resilience.js';
import type { PatientSummary } from '../../ehr/service.js';

/**
 * Compact JSON of EHR answers for the model: what it needs to cite (names, codes, values, dates,
 * resource ids), without the FHIR scaffolding. Lists are capped so one answer stays small.
 */

type Json = Record<string, unknown>;

const MAX_ITEMS = 50;

/** Drops undefined fields so the JSON stays short. */
function compact(o: Record<string, unknown>): Json {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

function text(concept: CodeableConcept | undefined): string | undefined {
  return concept?.text ?? concept?.coding?.find((c) => c.display !== undefined)?.display;
}

function code(concept: CodeableConcept | undefined): string | undefined {
  return concept?.coding?.[0]?.code;
}

function quantity(q: Quantity | undefined): Json | undefined {
  if (q?.value === undefined) return undefined;
  return compact({ value: q.value, unit: q.unit ?? q.code });
}

function patient(p: Patient): Json {
  const name = p.name?.[0];
  const full =
    name?.text ?? [...(name?.given ?? []), name?.family].filter((s) => s !== undefined).join(' ');
  return compact({
    id: p.id,
    name: full === '' ? undefined : full,
    gender: p.gender,
    birth_date: p.birthDate,
  });
}

function condition(c: Condition): Json {
  return compact({
    id: c.id,
    code: code(c.code),
    display: text(c.code),
    onset: c.onsetDateTime,
    recorded: c.recordedDate,
  });
}

function medication(m: MedicationRequest): Json {
  return compact({
    id: m.id,
    code: code(m.medicationCodeableConcept),
    display: text(m.medicationCodeableConcept) ?? m.medicationReference?.display,
    dosage: m.dosageInstruction?.[0]?.text,
    authored: m.authoredOn,
  });
}

function allergy(a: AllergyIntolerance): Json {
  const reactions = (a.reaction ?? [])
    .flatMap((r) => r.manifestation.map((m) => text(m)))
    .filter((s): s is string => s !== undefined);
  return compact({
    id: a.id,
    code: code(a.code),
    substance: text(a.code),
    criticality: a.criticality,
    reactions: reactions.length === 0 ? undefined : reactions,
  });
}

export function observation(o: Observation): Json {
  const components = o.component?.map((c) =>
    compact({ code: code(c.code), display: text(c.code), ...quantity(c.valueQuantity) }),
  );
  return compact({
    id: o.id,
    code: code(o.code),
    display: text(o.code),
    ...quantity(o.valueQuantity),
    value_text: o.valueString ?? text(o.valueCodeableConcept),
    components: components?.length ? components : undefined,
    interpretation: text(o.interpretation?.[0]),
    effective: o.effectiveDateTime ?? o.effectivePeriod?.start ?? o.issued,
  });
}

/** `fetched_at` always; `stale: true` when the answer is the last good one (the EHR was down). */
function freshness(answer: Labelled<unknown>): Json {
  return { stale: answer.stale, fetched_at: answer.fetchedAt };
}

function list<T>(items: readonly T[], one: (item: T) => Json): Json[] {
  return items.slice(0, MAX_ITEMS).map(one);
}

export function summaryResult(answer: Labelled<PatientSummary>): Json {
  const s = answer.value;
  return {
    patient: patient(s.patient),
    conditions: list(s.conditions, condition),
    medications: list(s.medications, medication),
    allergies: list(s.allergies, allergy),
    vitals: list(s.vitals, observation),
    ...freshness(answer),
  };
}

export function labsResult(patientId: string, answer: Labelled<Observation[]>): Json {
  return { patient_id: patientId, labs: list(answer.value, observation), ...freshness(answer) };
}

export function medicationsResult(patientId: string, answer: Labelled<MedicationRequest[]>): Json {
  return {
    patient_id: patientId,
    medications: list(answer.value, medication),
    ...freshness(answer),
  };
}

export function allergiesResult(patientId: string, answer: Labelled<AllergyIntolerance[]>): Json {
  return { patient_id: patientId, allergies: list(answer.value, allergy), ...freshness(answer) };
}
