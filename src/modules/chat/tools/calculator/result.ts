import type { Args } from './args.js';

export const CALCULATOR_NAMES = [
  'bmi',
  'bsa',
  'egfr',
  'cockcroft_gault',
  'map',
  'anion_gap',
  'corrected_calcium',
  'cha2ds2_vasc',
  'has_bled',
  'curb_65',
  'wells_dvt',
] as const;

export type CalculatorName = (typeof CALCULATOR_NAMES)[number];

/** A criterion of a points score that counted, with the points it added (negative for Wells' −2). */
export interface CountedCriterion {
  criterion: string;
  points: number;
}

/** What the tool returns: a plain JSON object. */
export interface CalculationResult {
  calculator: CalculatorName;
  /** Rounded as reported; categories are read from this rounded value. */
  value: number;
  unit: string;
  interpretation: string;
  /** The inputs as used, in canonical units (names carry the unit). */
  inputs: Record<string, number | string | boolean | null>;
  formula: string;
  reference: string;
  /** Points scores: the criteria that counted, and the score's range. */
  criteria_counted?: CountedCriterion[];
  min_points?: number;
  max_points?: number;
  /** The same value in the other common unit (corrected calcium). */
  alternative?: { value: number; unit: string };
  notes?: string[];
}

export interface Calculator {
  name: CalculatorName;
  /** The arguments it takes besides `calculator`. */
  fields: readonly string[];
  compute(args: Args): CalculationResult;
}

/** One criterion of a points score: counted when `met`. */
export interface Criterion {
  key: string;
  label: string;
  points: number;
  met: boolean;
}

/** The score's total and the criteria that counted, in the order given. */
export function tally(criteria: readonly Criterion[]): {
  total: number;
  counted: CountedCriterion[];
} {
  const counted = criteria
    .filter((c) => c.met)
    .map((c) => ({ criterion: c.label, points: c.points }));
  return { total: counted.reduce((sum, c) => sum + c.points, 0), counted };
}

/** The criteria as flags keyed by argument name, for `inputs`. */
export function flags(criteria: readonly Criterion[]): Record<string, boolean> {
  return Object.fromEntries(criteria.map((c) => [c.key, c.met]));
}
