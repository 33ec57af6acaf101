import { loincName, unitText } from './ehr-codes.js';

/**
 * The EHR tools' results in plain sentences, for the offline model's answer and for an answer cut
 * short after a write. Everything stated comes from the result: names, values, units, dates and
 * resource ids the tool returned, or a fixed sentence when it returned none. Deterministic.
 */

type Json = Record<string, unknown>;

export const EHR_TOOL_NAMES = [
  'ehr_patient_summary',
  'ehr_recent_labs',
  'ehr_medications',
  'ehr_allergies',
  'ehr_record_observation',
] as const;
export type EhrToolName = (typeof EHR_TOOL_NAMES)[number];

export const isEhrTool = (name: string): name is EhrToolName =>
  (EHR_TOOL_NAMES as readonly string[]).includes(name);

/** Items listed per kind in one sentence; more are counted, not listed. */
const MAX_LISTED = 10;
/** Values given per laboratory test: the newest and a few before it. */
const VALUES_PER_TEST = 3;

const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? v : undefined;
const objects = (v: unknown): Json[] =>
  Array.isArray(v)
    ? v.filter((x): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x))
    : [];

/** `2026-01-02 03:04 UTC` for a date-time, the date itself for a date, else as given. */
export function timeText(value: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return value;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return value;
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

const dayText = (value: string): string => {
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? value : new Date(ms).toISOString().slice(0, 10);
};

function quantityText(o: Json): string | undefined {
  const value = num(o.value);
  if (value === undefined) return str(o.value_text);
  const unit = str(o.unit);
  return unit === undefined ? String(value) : `${String(value)} ${unitText(unit)}`;
}

/** `, and 3 more` when a list was cut. */
const more = (total: number): string =>
  total > MAX_LISTED ? `, and ${String(total - MAX_LISTED)} more` : '';

function listText(items: Json[], one: (item: Json) => string | undefined): string | undefined {
  const texts = items
    .slice(0, MAX_LISTED)
    .map(one)
    .filter((s): s is string => s !== undefined);
  return texts.length === 0 ? undefined : texts.join('; ') + more(items.length);
}

function medicationText(m: Json): string | undefined {
  const name = str(m.display) ?? str(m.code);
  if (name === undefined) return undefined;
  const dosage = str(m.dosage);
  return dosage === undefined ? name : `${name} (${dosage})`;
}

function allergyText(a: Json): string | undefined {
  const name = str(a.substance) ?? str(a.code);
  if (name === undefined) return undefined;
  const details: string[] = [];
  const reactions = Array.isArray(a.reactions) ? a.reactions.filter((r) => str(r)) : [];
  if (reactions.length > 0) details.push(`reaction: ${reactions.join(', ')}`);
  const criticality = str(a.criticality);
  if (criticality !== undefined) details.push(`criticality ${criticality}`);
  return details.length === 0 ? name : `${name} (${details.join('; ')})`;
}

const observationName = (o: Json): string =>
  loincName(str(o.code) ?? '') ?? str(o.display) ?? `LOINC ${str(o.code) ?? 'unknown'}`;

/** `120/80 mmHg` from a written blood pressure's `systolic`, `diastolic` and `unit`. */
function pressureText(o: Json): string | undefined {
  const [systolic, diastolic] = [num(o.systolic), num(o.diastolic)];
  if (systolic === undefined || diastolic === undefined) return undefined;
  const unit = str(o.unit);
  const reading = `${String(systolic)}/${String(diastolic)}`;
  return unit === undefined ? reading : `${reading} ${unitText(unit)}`;
}

/** One observation's value: its quantity, or its parts' (a blood pressure's two). */
function observationValue(o: Json): string | undefined {
  const own = quantityText(o);
  if (own !== undefined) return own;
  const components = objects(o.components);
  const part = (code: string) => components.find((c) => c.code === code);
  const [systolic, diastolic] = [part('8480-6'), part('8462-4')];
  if (systolic?.unit === diastolic?.unit) {
    const pressure = pressureText({
      systolic: systolic?.value,
      diastolic: diastolic?.value,
      unit: systolic?.unit,
    });
    if (pressure !== undefined) return pressure;
  }
  const parts = components.flatMap((c) => {
    const q = quantityText(c);
    return q === undefined ? [] : [`${observationName(c)} ${q}`];
  });
  return parts.length === 0 ? undefined : parts.join(', ');
}

function observationText(o: Json, withName: boolean): string | undefined {
  const value = observationValue(o);
  if (value === undefined) return undefined;
  const when = str(o.effective);
  const text = withName ? `${observationName(o)} ${value}` : value;
  return when === undefined ? text : `${text} on ${dayText(when)}`;
}

/** Observations grouped by code in order of first appearance (the tool lists newest first). */
function byCode(observations: Json[]): Json[][] {
  const groups = new Map<string, Json[]>();
  for (const o of observations) {
    const key = str(o.code) ?? str(o.display) ?? '';
    groups.set(key, [...(groups.get(key) ?? []), o]);
  }
  return [...groups.values()];
}

/** Each test's newest value, then up to two earlier ones. */
function labsText(labs: Json[]): string | undefined {
  const tests = byCode(labs).flatMap((group) => {
    const [newest, ...earlier] = group;
    const first = newest === undefined ? undefined : observationText(newest, true);
    if (first === undefined) return [];
    const before = earlier
      .slice(0, VALUES_PER_TEST - 1)
      .map((o) => observationText(o, false))
      .filter((s): s is string => s !== undefined);
    return [before.length === 0 ? first : `${first} (earlier: ${before.join(', ')})`];
  });
  return tests.length === 0 ? undefined : tests.join('; ');
}

/** The newest of each vital sign. */
function vitalsText(vitals: Json[]): string | undefined {
  const newest = byCode(vitals).flatMap((group) => {
    const text = group[0] === undefined ? undefined : observationText(group[0], true);
    return text === undefined ? [] : [text];
  });
  return newest.length === 0 ? undefined : newest.join('; ');
}

function patientText(p: Json, patientId: string): string {
  const born = str(p.birth_date);
  const facts = [str(p.name), str(p.gender), born === undefined ? undefined : `born ${born}`];
  const known = facts.filter((f): f is string => f !== undefined);
  return known.length === 0
    ? `Patient ${patientId}.`
    : `Patient ${patientId}: ${known.join(', ')}.`;
}

const objectIn = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};

function summaryText(r: Json, patientId: string): string {
  const parts = [patientText(objectIn(r.patient), patientId)];
  const section = (label: string, text: string | undefined, none: string) => {
    parts.push(text === undefined ? none : `${label}: ${text}.`);
  };
  section(
    'Active conditions',
    listText(objects(r.conditions), (c) => str(c.display) ?? str(c.code)),
    'No active conditions are recorded.',
  );
  section(
    'Active medications',
    listText(objects(r.medications), medicationText),
    'No active medications are recorded.',
  );
  section('Allergies', listText(objects(r.allergies), allergyText), 'No allergies are recorded.');
  section('Latest vital signs', vitalsText(objects(r.vitals)), 'No vital signs are recorded.');
  return parts.join(' ');
}

function readText(name: EhrToolName, r: Json, patientId: string): string {
  switch (name) {
    case 'ehr_patient_summary':
      return summaryText(r, patientId);
    case 'ehr_medications': {
      const listed = listText(objects(r.medications), medicationText);
      return listed === undefined
        ? `No active medications are recorded for patient ${patientId}.`
        : `Active medications for patient ${patientId}: ${listed}.`;
    }
    case 'ehr_allergies': {
      const listed = listText(objects(r.allergies), allergyText);
      return listed === undefined
        ? `No allergies are recorded for patient ${patientId}.`
        : `Allergies recorded for patient ${patientId}: ${listed}.`;
    }
    case 'ehr_recent_labs': {
      const listed = labsText(objects(r.labs));
      return listed === undefined
        ? `No laboratory results of that kind are recorded for patient ${patientId}.`
        : `Latest laboratory results for patient ${patientId}: ${listed}.`;
    }
    case 'ehr_record_observation':
      return describeWrite(r) ?? 'The EHR did not say what was written.';
  }
}

/**
 * What a successful `ehr_record_observation` wrote, or undefined when the result does not say:
 * `Recorded heart rate 72 /min for patient X at 2026-01-02 03:04 UTC (Observation/abc).`
 */
export function describeWrite(result: Json): string | undefined {
  const written = objectIn(result.written);
  const id = str(result.id);
  const patientId = str(result.patient_id);
  const value = pressureText(written) ?? quantityText(written);
  if (id === undefined || patientId === undefined || value === undefined) return undefined;
  const code = str(written.code) ?? '';
  const name = loincName(code) ?? `observation LOINC ${code}`;
  const what = `${name} ${value} for patient ${patientId}`;
  const effective = str(written.effective);
  const at = effective === undefined ? '' : ` at ${timeText(effective)}`;
  const ref = `(${str(result.resource_type) ?? 'Observation'}/${id})`;
  return result.created === false
    ? `${capitalise(what)}${at} was already recorded ${ref}.`
    : `Recorded ${what}${at} ${ref}.`;
}

const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** The sentence for a tool's error: its fixed message, never anything else. */
function errorText(error: unknown): string {
  const message = typeof error === 'object' && error !== null ? str((error as Json).message) : '';
  if (message === undefined || message === '') return 'The EHR request failed.';
  return /[.!?]$/.test(message) ? message : `${message}.`;
}

/**
 * The sentences stating one EHR tool's answer (`content`: the JSON the engine gave the model).
 * `patientId`: the id the call asked about, for answers that do not repeat it.
 */
export function describeEhrResult(name: EhrToolName, content: string, patientId?: string): string {
  let result: unknown;
  try {
    result = JSON.parse(content);
  } catch {
    return 'The EHR gave no answer.';
  }
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    return 'The EHR gave no answer.';
  }
  const r = result as Json;
  if (r.error !== undefined) return errorText(r.error);
  const patient = str(r.patient_id) ?? str(objectIn(r.patient).id) ?? patientId ?? 'unknown';
  const text = readText(name, r, patient);
  const fetched = str(r.fetched_at);
  if (r.stale !== true) return text;
  const when = fetched === undefined ? '' : ` as fetched at ${timeText(fetched)}`;
  return `The EHR is unreachable; this is the record${when}. ${text}`;
}
