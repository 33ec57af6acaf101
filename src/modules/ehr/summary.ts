import type {
  AllergyIntolerance,
  Condition,
  MedicationRequest,
  Observation,
  Patient,
} from '@medplum/fhirtypes';
import { AppError } from '../../errors.js';
import type { EhrProvider } from '../../providers/ehr/types.js';
import { BLOOD_PRESSURE, DIASTOLIC, LOINC, SYSTOLIC } from '../../providers/ehr/vital-signs.js';

/** What the patient-summary tool reads, in one answer. */
export interface PatientSummary {
  patient: Patient;
  /** Conditions whose clinical status is active (or recurrence / relapse). */
  conditions: Condition[];
  medications: MedicationRequest[];
  allergies: AllergyIntolerance[];
  /** The newest vital-signs Observation of each code. */
  vitals: Observation[];
}

/** Vital-signs Observations searched to find the latest of each code. */
const VITALS_SCAN = 40;
const ACTIVE = new Set(['active', 'recurrence', 'relapse']);

const firstCode = (r: { code?: { coding?: { code?: string }[] } }): string | undefined =>
  r.code?.coding?.[0]?.code;

function isActive(condition: Condition): boolean {
  const codes = condition.clinicalStatus?.coding?.map((c) => c.code) ?? [];
  return codes.some((c) => c !== undefined && ACTIVE.has(c));
}

const hasCode = (o: Observation, code: string): boolean =>
  o.code.coding?.some((c) => c.system === LOINC && c.code === code) ?? false;

/**
 * The code a vital sign is the latest of: its first coding's; a blood pressure panel (85354-9) is
 * one reading wherever its code stands, and so are the two Observations (systolic 8480-6,
 * diastolic 8462-4) some servers hold a blood pressure as.
 */
function readingOf(o: Observation): string | undefined {
  if (hasCode(o, BLOOD_PRESSURE)) return BLOOD_PRESSURE;
  return firstCode(o);
}

/**
 * Newest first in, newest of each code out (Observations without a code are dropped). Blood
 * pressure is read in both forms: the newest panel, or, when newer than any panel, the newest
 * systolic and diastolic Observations (the two-Observation form older data may have).
 */
export function latestPerCode(observations: readonly Observation[]): Observation[] {
  const seen = new Set<string>();
  const latest: Observation[] = [];
  for (const o of observations) {
    const code = readingOf(o);
    if (code === undefined || seen.has(code)) continue;
    const panelSeen = seen.has(BLOOD_PRESSURE);
    const partSeen = seen.has(SYSTOLIC) || seen.has(DIASTOLIC);
    if ((code === SYSTOLIC || code === DIASTOLIC) && panelSeen) continue;
    if (code === BLOOD_PRESSURE && partSeen) continue;
    seen.add(code);
    latest.push(o);
  }
  return latest;
}

/** The five reads of a summary, in parallel; any failure fails the whole (the breaker sees one). */
export async function readSummary(
  provider: EhrProvider,
  patientId: string,
  signal: AbortSignal,
): Promise<PatientSummary> {
  const options = { signal };
  const [patient, conditions, medications, allergies, vitals] = await Promise.all([
    provider.getPatient(patientId, options),
    provider.conditions(patientId, options),
    provider.medicationRequests(patientId, { activeOnly: true }, options),
    provider.allergies(patientId, options),
    provider.searchObservations(
      { patientId, category: 'vital-signs', limit: VITALS_SCAN },
      options,
    ),
  ]);
  return {
    patient,
    conditions: conditions.filter(isActive),
    medications,
    allergies,
    vitals: latestPerCode(vitals),
  };
}

export const summaryCount = (s: PatientSummary): number =>
  1 + s.conditions.length + s.medications.length + s.allergies.length + s.vitals.length;

export const SUMMARY_TYPES = [
  'Patient',
  'Condition',
  'MedicationRequest',
  'AllergyIntolerance',
  'Observation',
];

const LAB_CODE = /^[A-Za-z0-9.-]{1,32}$/;
const MAX_LAB_CODES = 20;
const MAX_LAB_LIMIT = 100;

/** Tool arguments arrive unchecked: an array of 1 to 20 code-shaped strings. */
function isCodeList(codes: unknown): codes is readonly string[] {
  return (
    Array.isArray(codes) &&
    codes.length > 0 &&
    codes.length <= MAX_LAB_CODES &&
    codes.every((c) => typeof c === 'string' && LAB_CODE.test(c))
  );
}

/** The last-good key part of a labs read, after checking its codes and limit. */
export function labsKey(codes: readonly string[], limit: number): string {
  if (!isCodeList(codes)) {
    throw new AppError('VALIDATION_ERROR', 'Request validation failed', [
      { field: 'codes', message: `1 to ${String(MAX_LAB_CODES)} LOINC codes` },
    ]);
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LAB_LIMIT) {
    throw new AppError('VALIDATION_ERROR', 'Request validation failed', [
      { field: 'limit', message: `an integer from 1 to ${String(MAX_LAB_LIMIT)}` },
    ]);
  }
  return `labs:${[...codes].sort().join(',')}:${String(limit)}`;
}
