import type { Resource } from '@medplum/fhirtypes';
import { LOINC } from './vital-signs.js';
import { EhrError, malformed } from './errors.js';
import type { ObservationQuery } from './types.js';

/** Search parameters of the reads, built only from checked values. */

export const MAX_LIMIT = 1000;

/** Only the elements the service reads (`_elements`); required ones are always listed. */
export const ELEMENTS = {
  Patient: 'identifier,active,name,gender,birthDate',
  Observation:
    'status,category,code,subject,encounter,effective,issued,value,component,interpretation,referenceRange',
  Condition: 'clinicalStatus,verificationStatus,code,subject,onset,recordedDate',
  MedicationRequest: 'status,intent,medication,subject,authoredOn,dosageInstruction',
  AllergyIntolerance: 'clinicalStatus,verificationStatus,criticality,code,patient,reaction',
  Encounter: 'status,class,type,subject,period,reasonCode',
} as const;

export type SearchType = Exclude<keyof typeof ELEMENTS, 'Patient'>;
export type SearchParams = Record<string, string | string[]>;

/** Which reference ties each searched type to its patient. */
const PATIENT_REFERENCE: Record<SearchType, 'subject' | 'patient'> = {
  Observation: 'subject',
  Condition: 'subject',
  MedicationRequest: 'subject',
  AllergyIntolerance: 'patient',
  Encounter: 'subject',
};

const CATEGORIES: ReadonlySet<string> = new Set(['vital-signs', 'laboratory']);
const LOINC_CODE = /^[0-9]{1,7}-[0-9]$/;

export function checkLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new EhrError('rejected', 'invalid limit');
  }
  return limit;
}

function checkLoinc(code: unknown): string {
  if (typeof code !== 'string' || !LOINC_CODE.test(code)) {
    throw new EhrError('rejected', 'invalid LOINC code');
  }
  return code;
}

function dateParam(prefix: 'ge' | 'le', date: unknown, what: string): string | undefined {
  if (date === undefined) return undefined;
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
    throw new EhrError('rejected', `invalid ${what}`);
  }
  return `${prefix}${date.toISOString()}`;
}

/** category, code (any of the LOINC codes), date range and newest first. */
export function observationParams(query: ObservationQuery): SearchParams {
  const params: SearchParams = { _sort: '-date' };
  const category: unknown = query.category;
  if (category !== undefined) {
    if (typeof category !== 'string' || !CATEGORIES.has(category)) {
      throw new EhrError('rejected', 'invalid observation category');
    }
    params.category = category;
  }
  const code: unknown = query.code;
  const codes: unknown[] = code === undefined ? [] : Array.isArray(code) ? code : [code];
  if (codes.length > 0) params.code = codes.map((c) => `${LOINC}|${checkLoinc(c)}`).join(',');
  const dates = [dateParam('ge', query.since, 'since'), dateParam('le', query.until, 'until')];
  const defined = dates.filter((d): d is string => d !== undefined);
  if (defined.length > 0) params.date = defined;
  return params;
}

/** Every match must belong to the patient searched for. */
export function checkPatient(resource: Resource, type: SearchType, patientId: string): void {
  const holder = resource as unknown as Record<string, { reference?: unknown } | undefined>;
  const reference = holder[PATIENT_REFERENCE[type]]?.reference;
  const ok =
    typeof reference === 'string' &&
    (reference === `Patient/${patientId}` || reference.endsWith(`/Patient/${patientId}`));
  if (!ok) throw malformed(`search ${type} answered another patient's resource`);
}
