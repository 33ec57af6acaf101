import { AppError } from '../../../errors.js';
import type { LlmTool } from '../../../providers/llm/types.js';
import type { EhrCaller, EhrService } from '../../ehr/service.js';
import {
  argsChecker,
  DEFAULT_LAB_CODES,
  DEFAULT_LAB_LIMIT,
  LabsArgs,
  ObservationArgs,
  observationKey,
  PatientArgs,
} from './ehr-args.js';
import { describeWrite } from './ehr-describe.js';
import { observationInput, RECORDABLE_VITAL_SIGNS } from './ehr-record.js';
import { allergiesResult, labsResult, medicationsResult, summaryResult } from './ehr-format.js';
import { ToolError, type Tool, type ToolContext } from './types.js';

/**
 * An EHR failure as the tool error the model reads: a fixed sentence per kind, never the patient's
 * data nor the EHR's own words. The guard's refusals are themselves fixed sentences.
 */
function toToolError(error: unknown): Error {
  if (error instanceof ToolError) return error;
  if (!(error instanceof AppError)) return new ToolError('The EHR request failed');
  switch (error.code) {
    case 'FORBIDDEN':
      return new ToolError(`Refused: ${error.message}`);
    case 'NOT_FOUND':
      return new ToolError('Not found in the EHR');
    case 'VALIDATION_ERROR':
      return new ToolError('The EHR refused the request as invalid');
    case 'SERVICE_UNAVAILABLE':
      return new ToolError('The EHR is unavailable; try again later');
    default:
      return new ToolError('The EHR request failed');
  }
}

/** Runs `work`, turning any EHR failure into a ToolError (a cancelled turn stays cancelled). */
async function guarded<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (signal.aborted) throw signal.reason as Error;
    throw toToolError(error);
  }
}

const caller = (context: ToolContext): EhrCaller => ({ id: context.userId });

/** The schema as plain JSON for the model, without the house's `x-` annotations. */
function modelSchema(schema: object): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(schema, (key, value: unknown) => (key.startsWith('x-') ? undefined : value)),
  ) as Record<string, unknown>;
}

function definition(name: string, description: string, parameters: object): LlmTool {
  return { name, description, parameters: modelSchema(parameters) };
}

function patientSummaryTool(ehr: EhrService): Tool {
  const check = argsChecker(PatientArgs);
  return {
    definition: definition(
      'ehr_patient_summary',
      "Reads a patient's record from the EHR: demographics, active conditions, active " +
        'medications, allergies and the latest vital signs. Cite what you use by its id. ' +
        '`stale: true` means the EHR was unreachable and this is the last answer fetched at ' +
        '`fetched_at`: say so.',
      PatientArgs,
    ),
    async run(args, context) {
      const { patient_id } = check(args);
      const answer = await guarded(context.signal, () =>
        ehr.patientSummary(caller(context), patient_id, { signal: context.signal }),
      );
      return summaryResult(answer);
    },
  };
}

function recentLabsTool(ehr: EhrService): Tool {
  const check = argsChecker(LabsArgs);
  return {
    definition: definition(
      'ehr_recent_labs',
      "Reads a patient's newest laboratory results from the EHR, newest first, optionally only " +
        'the given LOINC codes (e.g. 2160-0 creatinine, 4548-4 HbA1c, 2823-3 potassium). ' +
        '`stale: true` means the last answer fetched at `fetched_at` (the EHR was unreachable).',
      LabsArgs,
    ),
    async run(args, context) {
      const a = check(args);
      const codes = a.codes ?? [...DEFAULT_LAB_CODES];
      const limit = a.limit ?? DEFAULT_LAB_LIMIT;
      const answer = await guarded(context.signal, () =>
        ehr.recentLabs(caller(context), a.patient_id, codes, limit, { signal: context.signal }),
      );
      return labsResult(a.patient_id, answer);
    },
  };
}

function listTool(
  name: string,
  what: string,
  read: (c: EhrCaller, id: string, signal: AbortSignal) => Promise<Record<string, unknown>>,
): Tool {
  const check = argsChecker(PatientArgs);
  return {
    definition: definition(
      name,
      `Reads a patient's ${what} from the EHR. \`stale: true\` means the last answer fetched at ` +
        '`fetched_at` (the EHR was unreachable).',
      PatientArgs,
    ),
    async run(args, context) {
      const { patient_id } = check(args);
      return await guarded(context.signal, () => read(caller(context), patient_id, context.signal));
    },
  };
}

function recordObservationTool(ehr: EhrService, now: () => Date): Tool {
  const check = argsChecker(ObservationArgs);
  return {
    definition: definition(
      'ehr_record_observation',
      "Writes one measurement to the patient's EHR record as an Observation (LOINC code, value, " +
        'UCUM unit, when measured), read back by the other EHR tools. Vital signs, in their ' +
        `FHIR units: ${RECORDABLE_VITAL_SIGNS}; or a laboratory test ehr_recent_labs reads by ` +
        'default. Only when the user asked for it to be recorded. ' +
        'Returns the resource id and whether it was created now or already existed (the same ' +
        'request in a turn never writes twice).',
      ObservationArgs,
    ),
    writes: true,
    describe: describeWrite,
    async run(args, context) {
      const a = check(args);
      const at = now();
      const effective = a.effective === undefined ? at : new Date(a.effective);
      const key = observationKey(context.userId, a, context, at);
      const input = observationInput(a, effective);
      // A write is never cancelled once sent: no signal goes to the EHR.
      const written = await guarded(new AbortController().signal, () =>
        ehr.recordObservation(caller(context), a.patient_id, input, key),
      );
      return {
        ...written,
        outcome: written.created ? 'created' : 'existing',
        written: {
          code: a.code,
          ...(a.value === undefined ? {} : { value: a.value }),
          ...(a.systolic === undefined ? {} : { systolic: a.systolic, diastolic: a.diastolic }),
          unit: a.unit,
          effective: effective.toISOString(),
        },
      };
    },
  };
}

export interface EhrToolsOptions {
  now?: () => Date;
}

/** The EHR tools (issue 13): four reads and one write, all through the EhrService's checks. */
export function ehrTools(ehr: EhrService, options: EhrToolsOptions = {}): Tool[] {
  const now = options.now ?? (() => new Date());
  return [
    patientSummaryTool(ehr),
    recentLabsTool(ehr),
    listTool('ehr_medications', 'active medications', async (c, id, signal) =>
      medicationsResult(id, await ehr.medications(c, id, { signal })),
    ),
    listTool('ehr_allergies', 'allergies and intolerances', async (c, id, signal) =>
      allergiesResult(id, await ehr.allergies(c, id, { signal })),
    ),
    recordObservationTool(ehr, now),
  ];
}

/** The EHR tools when an EHR is configured, else none. */
export function ehrToolsIfConfigured(ehr: EhrService | undefined): Tool[] {
  if (ehr === undefined || ehr.status().status === 'disabled') return [];
  return ehrTools(ehr);
}
