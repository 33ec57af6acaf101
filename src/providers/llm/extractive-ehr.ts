import {
  BLOOD_PRESSURE,
  LAB_TESTS,
  PRESSURE_PARTS,
  VITAL_SIGNS,
  type VitalSign,
} from '../../modules/chat/tools/ehr-codes.js';
import { BLOOD_PRESSURE as PANEL } from '../ehr/vital-signs.js';
import {
  describeEhrResult,
  isEhrTool,
  type EhrToolName,
} from '../../modules/chat/tools/ehr-describe.js';
import type { LlmMessage, LlmRequest } from './types.js';

/**
 * The offline model's reading of a clinician's patient question (issue 13): which EHR tools to
 * call with which arguments, from plain patterns, and the tools' answers as sentences. It never
 * guesses: no patient id, no known measurement or an unknown unit, and it calls nothing.
 */

/** One tool call the question asks for (the model gives it an id). */
export interface EhrAsk {
  name: EhrToolName;
  arguments: Record<string, unknown>;
}

/** Writes asked for (a recording request), else reads. */
export interface EhrAsks {
  writes: EhrAsk[];
  reads: EhrAsk[];
}

const NONE: EhrAsks = { writes: [], reads: [] };

/** A FHIR id (R4 `id`), as the tools accept it. */
const FHIR_ID = /^[A-Za-z0-9\-.]{1,64}$/;
/** `patient pat-123`, `patient id: 42`, `Patient/abc-1`. */
const PATIENT_WORD =
  /\bpatient(?:\s+(id|number|no)\b\.?\s*[:#]?\s*|\s*[:#]\s*|\/|\s+)([A-Za-z0-9\-.]+)/gi;
/** `pat-123's medications`. */
const POSSESSIVE = /(?<![A-Za-z0-9\-.])([A-Za-z0-9\-.]*[0-9][A-Za-z0-9\-.]*)['’]s\b/g;
/** The question points back at a patient named earlier in the conversation. */
const BACK_REFERENCE = /\b(?:(?:the|this|that|same) patient|his|her|their|he|she)\b/i;

const WRITE_VERB = /\b(?:record|log|chart|document|enter|save|add|write|note|store)\b/i;
const LABS = /\b(?:labs?|laborator(?:y|ies)|blood ?work|bloods|blood tests?|(?:test )?results)\b/i;
const MEDICATIONS = /\b(?:medications?|medicines?|meds|drugs?|prescriptions?|prescribed|taking)\b/i;
const ALLERGIES = /\b(?:allerg(?:y|ies|ic)|intolerances?)\b/i;
const SUMMARY = /\b(?:summar(?:y|ise|ize)|overview|history|background|about|who is)\b/i;

/** What a unit may be followed by when the question gives none. */
const NO_UNIT = /^(?:$|[,;?!]|\.(?!\d)|(?:for|in|on|to|at|and|of|into|please)\b)/i;
/** Between a vital's name and its value: `heart rate of 72`, `temperature: 38.2`. */
const VALUE = /^\s*(?:(?:of|is|was|at|=|:)\s*)?(-?\d+(?:\.\d+)?)\s*/i;

/** A patient id found in a question, and where. */
interface Named {
  id: string;
  index: number;
}

/** The patient id the question names, if any: "patient" followed by an id, or `<id>'s`. */
export function patientIdIn(text: string): Named | undefined {
  for (const m of text.matchAll(PATIENT_WORD)) {
    const id = (m[2] ?? '').replace(/\.+$/, '');
    // Without "id" before it, an id must look like one (a digit or a dash): not "patient has".
    if (FHIR_ID.test(id) && (m[1] !== undefined || /[0-9-]/.test(id))) {
      return { id, index: m.index + m[0].length - (m[2] ?? '').length };
    }
  }
  for (const m of text.matchAll(POSSESSIVE)) {
    const id = (m[1] ?? '').replace(/\.+$/, '');
    if (FHIR_ID.test(id) && /[A-Za-z-]/.test(id)) return { id, index: m.index };
  }
  return undefined;
}

/** The patient an earlier turn was about: its EHR calls' argument, or its question's id. */
function earlierPatient(messages: readonly LlmMessage[]): string | undefined {
  for (let i = messages.length - 2; i >= 0; i -= 1) {
    const m = messages[i];
    if (m?.role === 'assistant') {
      const call = m.toolCalls?.findLast((c) => isEhrTool(c.name));
      const id = call?.arguments.patient_id;
      if (typeof id === 'string' && FHIR_ID.test(id)) return id;
    } else if (m?.role === 'user') {
      const named = patientIdIn(m.content);
      if (named !== undefined) return named.id;
    }
  }
  return undefined;
}

/** A value as recorded: its UCUM unit (metres become centimetres), or undefined when unclear. */
interface Reading {
  value: number;
  unit: string;
}

/** The unit given after a value (UCUM), the vital's own when none is given, else undefined. */
function readingAfter(value: number, rest: string, vital: VitalSign): Reading | undefined {
  for (const u of vital.units) {
    if (!u.pattern.test(rest)) continue;
    const factor = u.factor ?? 1;
    return { value: Math.round(value * factor * 1e6) / 1e6, unit: u.ucum };
  }
  return NO_UNIT.test(rest) ? { value, unit: vital.unit } : undefined;
}

/** `<name> [of|is|:] <value> [unit]`: null when the name is absent, undefined when unclear. */
function named(text: string, vital: VitalSign): Reading | null | undefined {
  const name = vital.pattern.exec(text);
  if (name === null) return null;
  const after = text.slice(name.index + name[0].length);
  const value = VALUE.exec(after);
  if (value === null) return undefined;
  return readingAfter(Number(value[1]), after.slice(value[0].length), vital);
}

/**
 * `blood pressure 120/80 mmHg`, or `systolic 120 diastolic 80`, as its systolic and diastolic
 * values; null when the question names no blood pressure, undefined when it does without a clear
 * reading of both (one part alone is not recorded: a blood pressure is one panel of two).
 */
function bloodPressure(text: string): [number, number] | null | undefined {
  const bp = BLOOD_PRESSURE.exec(text);
  if (bp === null) {
    const [systolic, diastolic] = PRESSURE_PARTS.map((part) => named(text, part));
    if (systolic === null && diastolic === null) return null;
    if (!systolic || !diastolic) return undefined;
    return [systolic.value, diastolic.value];
  }
  const after = text.slice(bp.index + bp[0].length);
  const m = /^\s*(?:(?:of|is|was|at|=|:)\s*)?(\d{2,3})\s*\/\s*(\d{2,3})\s*(.*)$/is.exec(after);
  if (m === null) return undefined;
  const rest = m[3] ?? '';
  if (!/^mm\s?\[?hg\]?/i.test(rest) && !NO_UNIT.test(rest)) return undefined;
  return [Number(m[1]), Number(m[2])];
}

/**
 * The measurements a recording request gives; `[]` when it names none; undefined when one it
 * names is unclear (no value, or a unit not known for it): then nothing is recorded.
 */
function measurements(text: string, patientId: string): EhrAsk[] | undefined {
  const record = (args: Record<string, unknown>): EhrAsk => ({
    name: 'ehr_record_observation',
    arguments: { patient_id: patientId, ...args },
  });
  const asks: EhrAsk[] = [];
  const bp = bloodPressure(text);
  if (bp === undefined) return undefined;
  if (bp !== null) {
    asks.push(record({ code: PANEL, systolic: bp[0], diastolic: bp[1], unit: 'mm[Hg]' }));
  }
  for (const vital of VITAL_SIGNS) {
    const reading = named(text, vital);
    if (reading === null) continue;
    if (reading === undefined) return undefined;
    asks.push(record({ code: vital.code, value: reading.value, unit: reading.unit }));
  }
  return asks;
}

/** The laboratory tests a question names (more specific names first, each span used once). */
function labCodes(text: string): string[] {
  let rest = text;
  const codes: string[] = [];
  for (const test of LAB_TESTS) {
    const m = test.pattern.exec(rest);
    if (m === null) continue;
    codes.push(test.code);
    rest = rest.slice(0, m.index) + ' '.repeat(m[0].length) + rest.slice(m.index + m[0].length);
  }
  return codes;
}

function reads(text: string, patientId: string, named: boolean): EhrAsk[] {
  const args = { patient_id: patientId };
  const asks: EhrAsk[] = [];
  const codes = labCodes(text);
  if (codes.length > 0) {
    asks.push({
      name: 'ehr_recent_labs',
      arguments: { ...args, codes, limit: Math.min(100, codes.length * 3) },
    });
  } else if (LABS.test(text)) asks.push({ name: 'ehr_recent_labs', arguments: args });
  if (MEDICATIONS.test(text)) asks.push({ name: 'ehr_medications', arguments: args });
  if (ALLERGIES.test(text)) asks.push({ name: 'ehr_allergies', arguments: args });
  // A question naming a patient and nothing else that is known gets the patient's summary.
  if (SUMMARY.test(text) || (asks.length === 0 && named)) {
    asks.push({ name: 'ehr_patient_summary', arguments: args });
  }
  return asks;
}

/**
 * The EHR calls the conversation's last message asks for, limited to the tools offered. The
 * patient is the one the question names, or (when it points back with "the patient", "her", …)
 * the one the conversation was last about.
 */
export function ehrAsks(request: LlmRequest): EhrAsks {
  const last = request.messages.at(-1);
  if (last?.role !== 'user') return NONE;
  const offered = new Set(request.tools.map((t) => t.name).filter(isEhrTool));
  if (offered.size === 0) return NONE;
  const text = last.content;
  const named = patientIdIn(text);
  const patientId =
    named?.id ?? (BACK_REFERENCE.test(text) ? earlierPatient(request.messages) : undefined);
  if (patientId === undefined) return NONE;
  // The id is no measurement nor a lab's name: it is blanked before those are looked for.
  const rest =
    named === undefined
      ? text
      : text.slice(0, named.index) + ' ' + text.slice(named.index + named.id.length);
  const only = (asks: EhrAsk[]) => asks.filter((a) => offered.has(a.name));
  if (WRITE_VERB.test(rest)) {
    const writes = measurements(rest, patientId);
    // A recording request it cannot read exactly is not answered with a read instead.
    if (writes === undefined) return NONE;
    if (writes.length > 0) return { writes: only(writes), reads: [] };
  }
  return { writes: [], reads: only(reads(rest, patientId, named !== undefined)) };
}

/**
 * The answer to the EHR tools' results ending the conversation (the last model round's calls),
 * or undefined when the last message is not an EHR tool's answer.
 */
export function ehrAnswer(messages: readonly LlmMessage[]): string | undefined {
  const answers: Extract<LlmMessage, { role: 'tool' }>[] = [];
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const m = messages[i];
    if (m?.role !== 'tool') break;
    answers.unshift(m);
  }
  const ehr = answers.filter((m) => isEhrTool(m.name));
  if (ehr.length === 0 || !isEhrTool(answers.at(-1)?.name ?? '')) return undefined;
  const asked = new Map(
    messages
      .flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []))
      .map((c) => [c.id, c.arguments.patient_id]),
  );
  return ehr
    .map((m) => {
      const id = asked.get(m.toolCallId);
      return describeEhrResult(
        m.name as EhrToolName,
        m.content,
        typeof id === 'string' ? id : undefined,
      );
    })
    .join(' ');
}
