import type { ToolContext } from './types.js';
import { createHash } from 'node:crypto';
import { Type, type Static, type TSchema } from 'typebox';
import { fieldErrors, strictAjv } from '../../../platform/http/validation.js';
import { ToolError } from './types.js';

/** The FHIR id syntax (R4 `id`): nothing else may reach a request path or a search. */
const FhirId = Type.String({
  pattern: '^[A-Za-z0-9\\-.]{1,64}$',
  'x-pattern-message': 'must be a FHIR id (letters, digits, - and ., at most 64)',
  description: 'The patient id in the EHR (a FHIR id).',
});

/** A LOINC code: up to seven digits, a dash, the check digit. */
const Loinc = Type.String({
  pattern: '^[0-9]{1,7}-[0-9]$',
  'x-pattern-message': 'must be a LOINC code such as 2160-0',
});

/** A UCUM-like unit: short, printable, no spaces at the ends. */
const Unit = Type.String({
  pattern: '^[A-Za-z0-9%/.*\\[\\]{}^()\\-]{1,32}$',
  'x-pattern-message': 'must be a UCUM unit such as mg/dL, mmol/L, kg or %',
});

export const PatientArgs = Type.Object({ patient_id: FhirId }, { additionalProperties: false });

export const MAX_LAB_CODES = 20;
export const MAX_LAB_LIMIT = 100;
export const DEFAULT_LAB_LIMIT = 20;

export const LabsArgs = Type.Object(
  {
    patient_id: FhirId,
    codes: Type.Optional(
      Type.Array(Loinc, {
        minItems: 1,
        maxItems: MAX_LAB_CODES,
        description: 'LOINC codes of the labs wanted; omitted: common chemistry and blood count.',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_LAB_LIMIT, description: 'Most results (20).' }),
    ),
  },
  { additionalProperties: false },
);

const Pressure = (what: string) =>
  Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 1000,
      description: `Blood pressure (85354-9) only: the ${what} value, in mm[Hg].`,
    }),
  );

export const ObservationArgs = Type.Object(
  {
    patient_id: FhirId,
    code: Loinc,
    value: Type.Optional(
      Type.Number({
        minimum: -1e9,
        maximum: 1e9,
        description: 'The measured value (every code but blood pressure).',
      }),
    ),
    systolic: Pressure('systolic'),
    diastolic: Pressure('diastolic'),
    unit: Unit,
    effective: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 40,
        description: 'When it was measured (ISO 8601 date-time); omitted: now.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Common laboratory tests, asked for when the model names none. */
export const DEFAULT_LAB_CODES = [
  '2160-0', // creatinine
  '33914-3', // eGFR
  '2951-2', // sodium
  '2823-3', // potassium
  '2345-7', // glucose
  '4548-4', // HbA1c
  '13457-7', // LDL cholesterol (calculated)
  '2093-3', // total cholesterol
  '718-7', // hemoglobin
  '6690-2', // leukocytes
  '777-3', // platelets
  '1742-6', // ALT
  '1920-8', // AST
  '6301-6', // INR
  '3016-3', // TSH
] as const;

const ajv = strictAjv();

/**
 * A checker for one schema: the arguments as typed, or a ToolError naming the fields at fault
 * (never their values). A null counts as omitted: some models send null for every unused field.
 */
export function argsChecker<S extends TSchema>(schema: S): (args: unknown) => Static<S> {
  const validate = ajv.compile(schema);
  return (args) => {
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      throw new ToolError('arguments must be a JSON object');
    }
    const given = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null));
    if (validate(given)) return given as Static<S>;
    const fields = fieldErrors(validate.errors ?? [], 'arguments').slice(0, 5);
    const listed = fields.map(
      (f) => `${f.field.replace(/^arguments\.?/, '') || 'arguments'} ${f.message}`,
    );
    throw new ToolError(`Invalid arguments: ${listed.join('; ')}`);
  };
}

/** What a tool gets beyond the caller and signal, when the chat engine offers it. */
const digest = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * The idempotency key of an observation write: the turn and the tool call plus the arguments, so a
 * retried turn (same ids) writes nothing new. Without turn ids (an engine that does not pass them)
 * the key is the user and the arguments, with the UTC day standing in for an omitted `effective`,
 * so the same reading asked twice the same day is written once.
 */
export function observationKey(
  userId: string,
  args: Static<typeof ObservationArgs>,
  ids: Pick<ToolContext, 'turnId'>,
  now: Date,
): string {
  const pressure = args.systolic === undefined ? [] : [args.systolic, args.diastolic ?? null];
  const content = JSON.stringify([
    args.patient_id,
    args.code,
    args.value ?? null,
    args.unit,
    args.effective ?? null,
    ...pressure,
  ]);
  // Per turn, not per call: a turn generated again has new call ids, and the same reading asked
  // for twice in one turn is one reading.
  if (ids.turnId !== undefined) {
    return `chat-tool:${digest(JSON.stringify([ids.turnId, content]))}`;
  }
  const day = now.toISOString().slice(0, 10);
  return `chat-tool:${digest(JSON.stringify([userId, args.effective ?? day, content]))}`;
}
