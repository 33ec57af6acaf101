/**
 * The LOINC codes the EHR tools are asked about in plain words: laboratory tests (the ones
 * `ehr_recent_labs` reads by default) and vital signs (what `ehr_record_observation` writes). One
 * table serves both ways: a question's words to a code, and a result's code to a name.
 */

export interface LabTest {
  code: string;
  /** The name used when stating a result. */
  name: string;
  /** How a question names it; more specific patterns come first in `LAB_TESTS`. */
  pattern: RegExp;
}

export const LAB_TESTS: readonly LabTest[] = [
  { code: '4548-4', name: 'HbA1c', pattern: /\b(?:hb\s?a1c|a1c|(?:haemo|hemo)globin a1c)\b/i },
  { code: '13457-7', name: 'LDL cholesterol', pattern: /\bldl(?:[\s-]cholesterol)?\b/i },
  { code: '2093-3', name: 'total cholesterol', pattern: /\b(?:total )?cholesterol\b/i },
  { code: '33914-3', name: 'eGFR', pattern: /\be?gfr\b/i },
  { code: '2160-0', name: 'creatinine', pattern: /\bcreatinine\b/i },
  { code: '2951-2', name: 'sodium', pattern: /\b(?:sodium|na\+?)(?=\s|$|[?.,;])/i },
  { code: '2823-3', name: 'potassium', pattern: /\b(?:potassium|k\+)(?=\s|$|[?.,;])/i },
  { code: '2345-7', name: 'glucose', pattern: /\b(?:blood )?(?:glucose|sugar)\b/i },
  { code: '718-7', name: 'hemoglobin', pattern: /\b(?:haemoglobin|hemoglobin|hgb|hb)\b/i },
  {
    code: '6690-2',
    name: 'white cell count',
    pattern: /\b(?:wbc|leukocytes?|leucocytes?|white (?:blood )?cells?(?: count)?)\b/i,
  },
  { code: '777-3', name: 'platelets', pattern: /\b(?:platelets?|plt)\b/i },
  { code: '1742-6', name: 'ALT', pattern: /\b(?:alt|alanine aminotransferase)\b/i },
  { code: '1920-8', name: 'AST', pattern: /\b(?:ast|aspartate aminotransferase)\b/i },
  { code: '6301-6', name: 'INR', pattern: /\binr\b/i },
  { code: '3016-3', name: 'TSH', pattern: /\btsh\b/i },
];

/** A unit as a question may write it, and the UCUM unit recorded for it. */
export interface UnitWord {
  pattern: RegExp;
  ucum: string;
  /** The value given in this unit times `factor` is the value in `ucum` (metres to cm). */
  factor?: number;
}

export interface VitalSign {
  code: string;
  name: string;
  pattern: RegExp;
  /** The unit recorded when the question names none. */
  unit: string;
  /** Units a question may give (the first one matching wins). */
  units: readonly UnitWord[];
}

const PER_MIN: UnitWord = {
  pattern: /^(?:\/min|bpm|beats?\s*(?:per|\/)\s*min(?:ute)?|breaths?\s*(?:per|\/)\s*min(?:ute)?)/i,
  ucum: '/min',
};
const MM_HG: UnitWord = { pattern: /^mm\s?\[?hg\]?/i, ucum: 'mm[Hg]' };

/**
 * The blood pressure's parts, named on their own (`systolic 135 diastolic 85`): recorded together
 * as one blood pressure panel (85354-9), never one without the other.
 */
export const PRESSURE_PARTS: readonly VitalSign[] = [
  {
    code: '8480-6',
    name: 'systolic blood pressure',
    pattern: /\bsystolic(?: blood pressure| bp)?\b/i,
    unit: 'mm[Hg]',
    units: [MM_HG],
  },
  {
    code: '8462-4',
    name: 'diastolic blood pressure',
    pattern: /\bdiastolic(?: blood pressure| bp)?\b/i,
    unit: 'mm[Hg]',
    units: [MM_HG],
  },
];

/** The vital signs recorded with one value each (each a FHIR R4 vital-signs profile's code). */
export const VITAL_SIGNS: readonly VitalSign[] = [
  {
    code: '8867-4',
    name: 'heart rate',
    pattern: /\b(?:heart rate|pulse(?: rate)?|hr)\b/i,
    unit: '/min',
    units: [PER_MIN],
  },
  {
    code: '9279-1',
    name: 'respiratory rate',
    pattern: /\b(?:respiratory rate|respiration rate|rr)\b/i,
    unit: '/min',
    units: [PER_MIN],
  },
  {
    code: '59408-5',
    name: 'oxygen saturation',
    pattern: /\b(?:oxygen saturation|o2 sat(?:uration)?|sp ?o2|sats?)\b/i,
    unit: '%',
    units: [{ pattern: /^(?:%|percent)/i, ucum: '%' }],
  },
  {
    code: '29463-7',
    name: 'body weight',
    pattern: /\b(?:body )?weight\b/i,
    unit: 'kg',
    units: [
      { pattern: /^(?:kg|kilo(?:gram)?s?)\b/i, ucum: 'kg' },
      { pattern: /^(?:g|grams?)\b/i, ucum: 'g' },
    ],
  },
  {
    code: '8302-2',
    name: 'body height',
    pattern: /\b(?:body )?height\b/i,
    unit: 'cm',
    units: [
      { pattern: /^(?:cm|centimet(?:er|re)s?)\b/i, ucum: 'cm' },
      // The body height profile records cm or inches: metres are written as centimetres.
      { pattern: /^(?:m|met(?:er|re)s?)\b/i, ucum: 'cm', factor: 100 },
    ],
  },
  {
    code: '8310-5',
    name: 'body temperature',
    pattern: /\b(?:body )?temp(?:erature)?\b/i,
    unit: 'Cel',
    units: [
      { pattern: /^(?:°\s?c|deg(?:rees?)?\s?c(?:elsius)?|c(?:elsius)?|cel)\b/i, ucum: 'Cel' },
      { pattern: /^(?:°\s?f|deg(?:rees?)?\s?f(?:ahrenheit)?|f(?:ahrenheit)?)\b/i, ucum: '[degF]' },
    ],
  },
];

/** The blood pressure panel (not one of its parts by name), asked for as `120/80`. */
export const BLOOD_PRESSURE = /(?<!(?:systolic|diastolic)\s+)\b(?:blood pressure|bp)\b/i;
const NAMES = new Map<string, string>([
  ...LAB_TESTS.map((t) => [t.code, t.name] as const),
  ...VITAL_SIGNS.map((v) => [v.code, v.name] as const),
  ...PRESSURE_PARTS.map((v) => [v.code, v.name] as const),
  ['85354-9', 'blood pressure'],
  ['2708-6', 'oxygen saturation'],
  ['39156-5', 'body mass index'],
  ['9843-4', 'head circumference'],
]);

/** Whether a LOINC code is one of the laboratory tests named here. */
export const isLabTest = (code: string): boolean => LAB_TESTS.some((t) => t.code === code);

/** The plain name of a LOINC code this module knows, else undefined. */
export function loincName(code: string): string | undefined {
  return NAMES.get(code);
}

/** Units as they read in a sentence: UCUM's bracketed forms spelled the usual way. */
export function unitText(unit: string): string {
  switch (unit) {
    case 'mm[Hg]':
      return 'mmHg';
    case 'Cel':
      return '°C';
    case '[degF]':
      return '°F';
    case '[lb_av]':
      return 'lb';
    case '[in_i]':
      return 'in';
    default:
      return unit;
  }
}
