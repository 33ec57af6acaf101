import { createHash } from 'node:crypto';
import type {
  CodeableConcept,
  Coding,
  DocumentReference,
  Identifier,
  Observation,
  Quantity,
} from '@medplum/fhirtypes';
import { EhrError } from './errors.js';
import type {
  Coded,
  ObservationCategory,
  ObservationInput,
  QuantityInput,
  SummaryNoteInput,
} from './types.js';
import { checkId } from './validate.js';
import {
  CATEGORY_SYSTEM,
  LOINC,
  UCUM,
  vitalSignProfile,
  type VitalSignProfile,
} from './vital-signs.js';

/** The resources the provider writes, built from checked input. */

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

function checkCoded(coded: ObservationInput['code'], what = 'observation code'): void {
  const loose = coded as Partial<Record<'system' | 'code', unknown>> | null;
  const ok =
    loose !== null &&
    typeof loose.system === 'string' &&
    loose.system !== '' &&
    typeof loose.code === 'string' &&
    loose.code !== '';
  if (!ok) throw new EhrError('rejected', `invalid ${what}`);
}

const coding = ({ system, code, display }: Coded): Coding => ({
  system,
  code,
  ...(display === undefined ? {} : { display }),
});

function quantity(value: QuantityInput | undefined, what: string): Quantity {
  if (
    typeof value?.value !== 'number' ||
    !Number.isFinite(value.value) ||
    typeof value.unit !== 'string' ||
    value.unit === ''
  ) {
    throw new EhrError('rejected', `invalid ${what}`);
  }
  return {
    value: value.value,
    unit: value.unit,
    system: value.system ?? UCUM,
    code: value.code ?? value.unit,
  };
}

function observationValue(input: ObservationInput): Partial<Observation> {
  const value = input.value;
  const components = input.components?.map((c) => {
    checkCoded(c.code, 'component code');
    return { code: { coding: [coding(c.code)] }, valueQuantity: quantity(c.value, 'component') };
  });
  const parts = components === undefined ? {} : { component: components };
  if (value === undefined) return parts;
  if ('text' in value) {
    if (typeof value.text !== 'string') throw new EhrError('rejected', 'invalid observation value');
    return { valueString: value.text, ...parts };
  }
  return { valueQuantity: quantity(value, 'observation value'), ...parts };
}

/** A quantity in UCUM and in one of the profile's units, else refused. */
function vitalQuantity(value: QuantityInput | undefined, vital: VitalSignProfile): Quantity {
  const q = quantity(value, 'vital sign value');
  if (q.system !== UCUM || !vital.units.includes(q.code ?? '')) {
    throw new EhrError('rejected', `unit not allowed for LOINC ${vital.code}`);
  }
  return q;
}

/** The value part of a vital sign: its quantity, or blood pressure's two components. */
function vitalValue(input: ObservationInput, vital: VitalSignProfile): Partial<Observation> {
  const wanted = vital.components;
  if (wanted === undefined) {
    if (input.components !== undefined || input.value === undefined || 'text' in input.value) {
      throw new EhrError('rejected', `LOINC ${vital.code} is written with one quantity`);
    }
    return { valueQuantity: vitalQuantity(input.value, vital) };
  }
  const given = input.components ?? [];
  const fits =
    input.value === undefined &&
    given.length === wanted.length &&
    wanted.every((w) => given.some((c) => c.code.system === LOINC && c.code.code === w.code));
  if (!fits) {
    const codes = wanted.map((w) => w.code).join(' and ');
    throw new EhrError('rejected', `LOINC ${vital.code} is written with components ${codes}`);
  }
  return {
    component: wanted.map((w) => ({
      code: { coding: [{ system: LOINC, ...w }] },
      valueQuantity: vitalQuantity(given.find((c) => c.code.code === w.code)?.value, vital),
    })),
  };
}

const CATEGORY_DISPLAY: Record<ObservationCategory, string> = {
  'vital-signs': 'Vital Signs',
  laboratory: 'Laboratory',
};

/** The category written: vital-signs for a vital sign (refused when asked otherwise). */
function categoryOf(
  input: ObservationInput,
  vital: VitalSignProfile | undefined,
): ObservationCategory | undefined {
  if (vital !== undefined && input.category !== undefined && input.category !== 'vital-signs') {
    throw new EhrError('rejected', `LOINC ${vital.code} is a vital sign`);
  }
  if (vital === undefined && input.category === 'vital-signs') {
    throw new EhrError('rejected', 'not a vital sign with a FHIR R4 profile');
  }
  return vital === undefined ? input.category : 'vital-signs';
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
  const vital = vitalSignProfile(input.code.system, input.code.code);
  const category = categoryOf(input, vital);
  const code: CodeableConcept =
    vital === undefined
      ? { coding: [coding(input.code)] }
      : {
          coding: [
            { system: LOINC, code: vital.code, display: vital.display },
            ...(vital.alsoCodes ?? [])
              .filter((c) => c.code === input.code.code)
              .map((c) => ({ system: LOINC, ...c })),
          ],
        };
  return {
    resourceType: 'Observation',
    ...(vital === undefined ? {} : { meta: { profile: [vital.profile] } }),
    identifier: [identifier],
    status: input.status ?? 'final',
    ...(category === undefined
      ? {}
      : {
          category: [
            {
              coding: [
                { system: CATEGORY_SYSTEM, code: category, display: CATEGORY_DISPLAY[category] },
              ],
            },
          ],
        }),
    code,
    subject: { reference: `Patient/${patientId}` },
    ...(encounterId === undefined ? {} : { encounter: { reference: `Encounter/${encounterId}` } }),
    effectiveDateTime: isoDate(input.effective, now, 'effective date'),
    ...(vital === undefined ? observationValue(input) : vitalValue(input, vital)),
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
