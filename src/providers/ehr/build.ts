import { createHash } from 'node:crypto';
import type { DocumentReference, Identifier, Observation } from '@medplum/fhirtypes';
import { EhrError } from './errors.js';
import type { ObservationInput, SummaryNoteInput } from './types.js';
import { checkId } from './validate.js';

/** The resources the provider writes, built from checked input. */

export const LOINC = 'http://loinc.org';
const CATEGORY_SYSTEM = 'http://terminology.hl7.org/CodeSystem/observation-category';
const UCUM = 'http://unitsofmeasure.org';
const MAX_KEY_LENGTH = 256;
const MAX_NOTE_CHARS = 100_000;

/**
 * The identifier a write carries, derived from the caller's idempotency key: a hash, so the key
 * itself (which may hold anything) never reaches the server or a search string.
 */
export function idempotencyIdentifier(
  system: string,
  type: string,
  key: string,
): Required<Pick<Identifier, 'system' | 'value'>> {
  if (typeof key !== 'string' || key === '' || key.length > MAX_KEY_LENGTH) {
    throw new EhrError('rejected', 'invalid idempotency key');
  }
  const value = createHash('sha256').update(`${type}\n${key}`).digest('hex');
  return { system, value };
}

/** The `If-None-Exist` header value matching `identifier`. */
export const ifNoneExist = (identifier: { system: string; value: string }): string =>
  new URLSearchParams({ identifier: `${identifier.system}|${identifier.value}` }).toString();

function isoDate(date: Date | undefined, now: number, what: string): string {
  const value = date ?? new Date(now);
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new EhrError('rejected', `invalid ${what}`);
  }
  return value.toISOString();
}

function checkCoded(coded: ObservationInput['code']): void {
  const loose = coded as Partial<Record<'system' | 'code', unknown>> | null;
  const ok =
    loose !== null &&
    typeof loose.system === 'string' &&
    loose.system !== '' &&
    typeof loose.code === 'string' &&
    loose.code !== '';
  if (!ok) throw new EhrError('rejected', 'invalid observation code');
}

function observationValue(value: ObservationInput['value']): Partial<Observation> {
  if (value === undefined) return {};
  if ('text' in value) {
    if (typeof value.text !== 'string') throw new EhrError('rejected', 'invalid observation value');
    return { valueString: value.text };
  }
  if (
    typeof value.value !== 'number' ||
    !Number.isFinite(value.value) ||
    typeof value.unit !== 'string'
  ) {
    throw new EhrError('rejected', 'invalid observation value');
  }
  return {
    valueQuantity: {
      value: value.value,
      unit: value.unit,
      system: value.system ?? UCUM,
      code: value.code ?? value.unit,
    },
  };
}

export function buildObservation(
  input: ObservationInput,
  identifier: Identifier,
  now: number,
): Observation {
  const patientId = checkId(input.patientId);
  checkCoded(input.code);
  const encounterId =
    input.encounterId === undefined ? undefined : checkId(input.encounterId, 'encounter id');
  const { system, code, display } = input.code;
  return {
    resourceType: 'Observation',
    identifier: [identifier],
    status: input.status ?? 'final',
    ...(input.category === undefined
      ? {}
      : { category: [{ coding: [{ system: CATEGORY_SYSTEM, code: input.category }] }] }),
    code: { coding: [{ system, code, ...(display === undefined ? {} : { display }) }] },
    subject: { reference: `Patient/${patientId}` },
    ...(encounterId === undefined ? {} : { encounter: { reference: `Encounter/${encounterId}` } }),
    effectiveDateTime: isoDate(input.effective, now, 'effective date'),
    ...observationValue(input.value),
  };
}

export function buildSummaryNote(
  note: SummaryNoteInput,
  identifier: Identifier,
  now: number,
): DocumentReference {
  const patientId = checkId(note.patientId);
  if (
    typeof note.text !== 'string' ||
    note.text.trim() === '' ||
    note.text.length > MAX_NOTE_CHARS
  ) {
    throw new EhrError('rejected', 'invalid summary note text');
  }
  const encounterId =
    note.encounterId === undefined ? undefined : checkId(note.encounterId, 'encounter id');
  const title = note.title ?? 'Conversation summary';
  return {
    resourceType: 'DocumentReference',
    identifier: [identifier],
    status: 'current',
    docStatus: 'final',
    type: { coding: [{ system: LOINC, code: '34133-9', display: 'Summary of episode note' }] },
    subject: { reference: `Patient/${patientId}` },
    date: isoDate(note.date, now, 'note date'),
    description: title,
    content: [
      {
        attachment: {
          contentType: 'text/plain; charset=utf-8',
          data: Buffer.from(note.text, 'utf8').toString('base64'),
          title,
        },
      },
    ],
    ...(encounterId === undefined
      ? {}
      : { context: { encounter: [{ reference: `Encounter/${encounterId}` }] } }),
  };
}
