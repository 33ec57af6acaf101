import type { Static } from 'typebox';
import type { ObservationInput } from '../../../providers/ehr/types.js';
import {
  DIASTOLIC,
  LOINC,
  SYSTOLIC,
  UCUM,
  VITAL_SIGN_PROFILES,
  vitalSignProfile,
} from '../../../providers/ehr/vital-signs.js';
import type { ObservationArgs } from './ehr-args.js';
import { isLabTest, loincName } from './ehr-codes.js';
import { ToolError } from './types.js';

type Args = Static<typeof ObservationArgs>;
type Input = Omit<ObservationInput, 'patientId' | 'idempotencyKey'>;

const orList = (items: readonly string[]): string =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${String(items.at(-1))}`;

/**
 * The vital signs the tool records, with their codes and units, for the model:
 * `8867-4 heart rate (/min), …, 85354-9 blood pressure (systolic and diastolic, mm[Hg])`.
 */
export const RECORDABLE_VITAL_SIGNS = VITAL_SIGN_PROFILES.map((p) => {
  const codes = orList([p.code, ...(p.alsoCodes ?? []).map((c) => c.code)]);
  const values = p.components === undefined ? '' : 'systolic and diastolic, ';
  return `${codes} ${loincName(p.code) ?? p.display} (${values}${orList(p.units)})`;
}).join(', ');

const quantity = (value: number, unit: string) => ({ value, unit, system: UCUM, code: unit });

/**
 * What `ehr_record_observation` writes, so that the service reads it back: a vital sign under its
 * FHIR R4 profile (category vital-signs, one of the profile's units; blood pressure as one panel
 * with systolic and diastolic components), or one of the laboratory tests the tools know
 * (category laboratory, read back by `ehr_recent_labs`). Anything else is refused with a sentence
 * the model can act on (codes and units only, never the values).
 */
export function observationInput(a: Args, effective: Date): Input {
  if (a.code === SYSTOLIC || a.code === DIASTOLIC) {
    throw new ToolError(
      'Record a blood pressure as one reading: code 85354-9 with systolic and diastolic (mm[Hg])',
    );
  }
  const vital = vitalSignProfile(LOINC, a.code);
  if (vital === undefined && !isLabTest(a.code)) {
    throw new ToolError(
      `Only vital signs (${RECORDABLE_VITAL_SIGNS}) and the laboratory tests ehr_recent_labs ` +
        'reads by default can be recorded',
    );
  }
  if (vital !== undefined && !vital.units.includes(a.unit)) {
    throw new ToolError(`The unit of LOINC ${a.code} must be one of: ${vital.units.join(', ')}`);
  }
  const common = { status: 'final' as const, code: { system: LOINC, code: a.code }, effective };
  if (vital?.components !== undefined) {
    if (a.systolic === undefined || a.diastolic === undefined || a.value !== undefined) {
      throw new ToolError('A blood pressure takes systolic and diastolic, and no value');
    }
    return {
      ...common,
      components: [
        { code: { system: LOINC, code: SYSTOLIC }, value: quantity(a.systolic, a.unit) },
        { code: { system: LOINC, code: DIASTOLIC }, value: quantity(a.diastolic, a.unit) },
      ],
    };
  }
  if (a.value === undefined || a.systolic !== undefined || a.diastolic !== undefined) {
    throw new ToolError('This measurement takes value, and no systolic or diastolic');
  }
  return {
    ...common,
    ...(vital === undefined ? { category: 'laboratory' as const } : {}),
    value: quantity(a.value, a.unit),
  };
}
