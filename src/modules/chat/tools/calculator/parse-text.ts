/**
 * Finding quantities in a normalised request (see `normaliseText`): numbers after their labels,
 * with units when written. Each finder returns undefined when the text does not say.
 */

export interface Measured {
  value: number;
  unit: string;
}

const NUMBER = String.raw`(\d+(?:\.\d+)?)`;
/** Words allowed between a label and its number: "creatinine of 1.2", "sodium level is 140". */
const FILLER = String.raw`\s*(?:(?:levels?|of|is|was|at|=|:)\s*)*`;

/** Lower case, one space, plain hyphens and quotes, subscripts as digits, micro as `u`. */
export function normaliseText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[µμ]/g, 'u')
    .replace(/micromol/g, 'umol')
    .replace(/[\u2010-\u2015\u2212]/g, '-')
    .replace(/[\u2018\u2019\u2032]/g, "'")
    .replace(/[\u201c\u201d\u2033]/g, '"')
    .replace(/\s+/g, ' ')
    .trim();
}

function toNumber(written: string | undefined): number | undefined {
  if (written === undefined) return undefined;
  const value = Number(written);
  return Number.isFinite(value) ? value : undefined;
}

/**
 * The first number written right after one of `labels` (alternatives of a regex), with the unit
 * after it when it is one of `units` (alternatives too; `unit` is '' when none is written).
 */
export function labelled(text: string, labels: string, units = ''): Measured | undefined {
  const unitPart = units === '' ? '' : String.raw`(?:\s*(${units})(?![a-z]))?`;
  const pattern = new RegExp(`(?<![a-z0-9])(?:${labels})(?![a-z])${FILLER}${NUMBER}${unitPart}`);
  const match = pattern.exec(text);
  const value = toNumber(match?.[1]);
  return value === undefined ? undefined : { value, unit: match?.[2] ?? '' };
}

/** Between an age and a one-letter sex: "76f", "54 yo m", "60-year-old f". */
const AGE_SEX_GAP = String.raw`\s*(?:-?\s*(?:yo|y\/o|years? old|year-old)\s*)?`;

const AGE_PATTERNS: readonly RegExp[] = [
  /(?<![\d.])(\d{1,3})\s*-?\s*(?:years?|yrs?|y)\s*-?\s*old/,
  /(?<![\d.])(\d{1,3})\s*(?:yo|y\/o|y\.o\.?)(?![a-z])/,
  /(?<![a-z])aged?\s*(?:of\s*)?[:=]?\s*(\d{1,3})(?![\d.])/,
  /(?<![\d.])(\d{1,3})\s*(?:years?|yrs?) of age/,
  new RegExp(String.raw`(?<![\d.a-z])(\d{1,3})${AGE_SEX_GAP}[mf](?![a-z0-9])`),
];

export function findAge(text: string): number | undefined {
  for (const pattern of AGE_PATTERNS) {
    const value = toNumber(pattern.exec(text)?.[1]);
    if (value !== undefined) return value;
  }
  return undefined;
}

const FEMALE_NOUN = new RegExp(
  String.raw`(?<![a-z])(?:woman|female|lady|girl)(?![a-z])|(?<![\d.])\d{1,3}${AGE_SEX_GAP}f(?![a-z0-9])`,
);
const MALE_NOUN = new RegExp(
  String.raw`(?<![a-z])(?:man|male|gentleman|boy)(?![a-z])|(?<![\d.])\d{1,3}${AGE_SEX_GAP}m(?![a-z0-9])`,
);
const FEMALE_PRONOUN = /(?<![a-z])(?:she|her)(?![a-z])/;
const MALE_PRONOUN = /(?<![a-z])(?:he|his|him)(?![a-z])/;

/** The sex the request states (nouns first, then pronouns); undefined when none, or both. */
export function findSex(text: string): 'female' | 'male' | undefined {
  let female = FEMALE_NOUN.test(text);
  let male = MALE_NOUN.test(text);
  if (!female && !male) {
    female = FEMALE_PRONOUN.test(text);
    male = MALE_PRONOUN.test(text);
  }
  if (female === male) return undefined;
  return female ? 'female' : 'male';
}

export function findWeight(text: string): Measured | undefined {
  const match = /(?<![\d.])(\d+(?:\.\d+)?)\s*(kg|kgs|kilograms?|kilos?|lbs?|pounds?)(?![a-z])/.exec(
    text,
  );
  const value = toNumber(match?.[1]);
  if (value === undefined || match?.[2] === undefined) return undefined;
  return { value, unit: match[2].startsWith('k') ? 'kg' : 'lb' };
}

const FEET = String.raw`(?:ft|feet|foot|')`;
const INCHES = String.raw`(?:in|inch|inches|"|'')`;

/** Height as written: feet and inches become inches. */
export function findHeight(text: string): Measured | undefined {
  const feetInches = new RegExp(
    String.raw`(?<![\d.])(\d)\s*${FEET}\s*(?:and\s*)?(\d{1,2}(?:\.\d+)?)\s*(?:${INCHES}(?![a-z]))?`,
  ).exec(text);
  if (feetInches?.[1] !== undefined && feetInches[2] !== undefined) {
    return { value: Number(feetInches[1]) * 12 + Number(feetInches[2]), unit: 'in' };
  }
  const finders: readonly (readonly [RegExp, string, number])[] = [
    [/(?<![\d.])(\d+(?:\.\d+)?)\s*(?:cm|centimet(?:er|re)s?)(?![a-z])/, 'cm', 1],
    [/(?<![\d.])(\d(?:\.\d+)?)\s*(?:m|meters?|metres?)(?![a-z0-9/])/, 'm', 1],
    [new RegExp(String.raw`(?<![\d.])(\d{2}(?:\.\d+)?)\s*${INCHES}(?![a-z])`), 'in', 1],
    [new RegExp(String.raw`(?<![\d.])(\d(?:\.\d+)?)\s*${FEET}(?![a-z])`), 'in', 12],
  ];
  for (const [pattern, unit, factor] of finders) {
    const value = toNumber(pattern.exec(text)?.[1]);
    if (value !== undefined) return { value: value * factor, unit };
  }
  return undefined;
}

/** Systolic and diastolic pressure, from "120/80" or from labelled values. */
export function findPressures(text: string): { systolic?: number; diastolic?: number } {
  const pair = /(?<![\d.])(\d{2,3})\s*\/\s*(\d{2,3})(?![\d.])/.exec(text);
  if (pair?.[1] !== undefined && pair[2] !== undefined) {
    return { systolic: Number(pair[1]), diastolic: Number(pair[2]) };
  }
  const systolic = labelled(text, String.raw`systolic(?: bp| blood pressure)?|sbp`)?.value;
  const diastolic = labelled(text, String.raw`diastolic(?: bp| blood pressure)?|dbp`)?.value;
  return {
    ...(systolic === undefined ? {} : { systolic }),
    ...(diastolic === undefined ? {} : { diastolic }),
  };
}

export function findRespiratoryRate(text: string): number | undefined {
  const labelledRate = labelled(
    text,
    String.raw`respiratory rate|resp(?:iratory)? rate|breathing rate|respirations?|rr|resps?`,
  );
  if (labelledRate !== undefined) return labelledRate.value;
  return toNumber(/(?<![\d.])(\d{1,3})\s*(?:breaths|resps)(?![a-z])/.exec(text)?.[1]);
}

const UNIT_SPELLING: Readonly<Record<string, string>> = {
  'mg/dl': 'mg/dL',
  'umol/l': 'umol/L',
  'mmol/l': 'mmol/L',
  'g/dl': 'g/dL',
  'g/l': 'g/L',
};

/**
 * The unit written (in the schema's spelling), or one inferred from the value where the two
 * units' plausible ranges do not overlap: up to `below` means `small`, from `above` on means
 * `large`; in between, undefined.
 */
export function unitFor(
  measured: Measured,
  small: string,
  large: string,
  [below, above]: readonly [number, number],
): string | undefined {
  if (measured.unit !== '') return UNIT_SPELLING[measured.unit];
  if (measured.value <= below) return small;
  if (measured.value >= above) return large;
  return undefined;
}
