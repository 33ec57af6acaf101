import type { Bundle, Resource } from '@medplum/fhirtypes';
import { EhrError, malformed } from './errors.js';

/**
 * Boundary checks: nothing the FHIR server answers is used before it passed these. They check
 * what the service relies on (types and required fields), not the whole R4 profile.
 */

const FHIR_ID = /^[A-Za-z0-9\-.]{1,64}$/;

/** Refuses anything but a FHIR id, so an argument cannot add a path segment or a query. */
export function checkId(id: unknown, what = 'patient id'): string {
  if (typeof id !== 'string' || !FHIR_ID.test(id)) {
    throw new EhrError('rejected', `invalid ${what}: not a FHIR id`);
  }
  return id;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function fail(type: string, path: string, expected: string): never {
  throw malformed(`${type}.${path} is not ${expected}`);
}

function requireString(r: Json, type: string, key: string): void {
  if (typeof r[key] !== 'string' || r[key] === '') fail(type, key, 'a non-empty string');
}

function optionalString(r: Json, type: string, key: string): void {
  if (r[key] !== undefined && typeof r[key] !== 'string') fail(type, key, 'a string');
}

function optionalObject(r: Json, type: string, key: string): void {
  if (r[key] !== undefined && !isObject(r[key])) fail(type, key, 'an object');
}

function optionalArray(r: Json, type: string, key: string, item: (x: unknown) => boolean): void {
  const value = r[key];
  if (value === undefined) return;
  if (!Array.isArray(value) || !value.every(item))
    fail(type, key, 'an array of the expected items');
}

function requireReference(r: Json, type: string, key: string): void {
  const ref = r[key];
  if (!isObject(ref) || typeof ref.reference !== 'string')
    fail(type, `${key}.reference`, 'a string');
}

function checkQuantity(q: unknown, type: string, path: string): void {
  if (q === undefined) return;
  if (!isObject(q)) fail(type, path, 'an object');
  if (q.value !== undefined && (typeof q.value !== 'number' || !Number.isFinite(q.value))) {
    fail(type, `${path}.value`, 'a number');
  }
  optionalString(q, type, 'unit');
}

function checkObservation(r: Json): void {
  requireString(r, 'Observation', 'status');
  if (!isObject(r.code)) fail('Observation', 'code', 'an object');
  requireReference(r, 'Observation', 'subject');
  optionalArray(r, 'Observation', 'category', isObject);
  optionalString(r, 'Observation', 'effectiveDateTime');
  optionalString(r, 'Observation', 'valueString');
  checkQuantity(r.valueQuantity, 'Observation', 'valueQuantity');
  optionalArray(r, 'Observation', 'component', (c) => isObject(c) && isObject(c.code));
  const components = (r.component ?? []) as Json[];
  components.forEach((c) => {
    checkQuantity(c.valueQuantity, 'Observation', 'component.valueQuantity');
  });
}

const CHECKS: Record<string, (r: Json) => void> = {
  Patient: (r) => {
    optionalArray(r, 'Patient', 'name', isObject);
    optionalString(r, 'Patient', 'birthDate');
    optionalString(r, 'Patient', 'gender');
  },
  Observation: checkObservation,
  Condition: (r) => {
    requireReference(r, 'Condition', 'subject');
    optionalObject(r, 'Condition', 'code');
    optionalObject(r, 'Condition', 'clinicalStatus');
  },
  MedicationRequest: (r) => {
    requireString(r, 'MedicationRequest', 'status');
    requireString(r, 'MedicationRequest', 'intent');
    requireReference(r, 'MedicationRequest', 'subject');
    optionalObject(r, 'MedicationRequest', 'medicationCodeableConcept');
    optionalArray(r, 'MedicationRequest', 'dosageInstruction', isObject);
  },
  AllergyIntolerance: (r) => {
    requireReference(r, 'AllergyIntolerance', 'patient');
    optionalObject(r, 'AllergyIntolerance', 'code');
    optionalArray(r, 'AllergyIntolerance', 'reaction', isObject);
  },
  Encounter: (r) => {
    requireString(r, 'Encounter', 'status');
    optionalObject(r, 'Encounter', 'class');
    optionalObject(r, 'Encounter', 'period');
  },
  DocumentReference: (r) => {
    requireString(r, 'DocumentReference', 'status');
  },
};

/** `value` as a resource of `type` with a valid id, or a malformed EhrError. */
export function checkResource<T extends Resource>(value: unknown, type: T['resourceType']): T {
  if (!isObject(value)) throw malformed(`expected a ${type}, got no object`);
  if (value.resourceType !== type) throw malformed(`expected a ${type}, got another resource type`);
  if (typeof value.id !== 'string' || !FHIR_ID.test(value.id)) fail(type, 'id', 'a FHIR id');
  CHECKS[type]?.(value);
  return value as unknown as T;
}

export interface Page<T> {
  resources: T[];
  next: string | undefined;
}

/** A searchset Bundle whose matches are all of `type`, and its next-page link. */
export function checkSearchBundle<T extends Resource>(
  value: unknown,
  type: T['resourceType'],
): Page<T> {
  if (!isObject(value) || value.resourceType !== 'Bundle') throw malformed('expected a Bundle');
  const bundle = value as unknown as Bundle;
  if (bundle.type !== 'searchset') throw malformed('expected a searchset Bundle');
  if (bundle.entry !== undefined && !Array.isArray(bundle.entry))
    fail('Bundle', 'entry', 'an array');
  if (bundle.link !== undefined && !Array.isArray(bundle.link)) fail('Bundle', 'link', 'an array');
  const resources: T[] = [];
  for (const entry of (bundle.entry ?? []) as unknown[]) {
    if (!isObject(entry)) fail('Bundle', 'entry', 'an array of objects');
    const mode = isObject(entry.search) ? entry.search.mode : undefined;
    if (mode === 'outcome' || mode === 'include') continue;
    resources.push(checkResource<T>(entry.resource, type));
  }
  const links = (bundle.link ?? []) as unknown[];
  const next = links.find((l) => isObject(l) && l.relation === 'next') as Json | undefined;
  if (next !== undefined && typeof next.url !== 'string') fail('Bundle', 'link.url', 'a string');
  return { resources, next: next?.url as string | undefined };
}
