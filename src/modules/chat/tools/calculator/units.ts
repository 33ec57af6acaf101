/**
 * Quantities the calculators read, each with its accepted units and a plausible physiological
 * range in its canonical unit. Values outside the range are refused rather than computed: they are
 * typing mistakes or unit mix-ups, and a formula applied to them gives a confident wrong answer.
 */

export interface Quantity {
  /** The argument holding the number, e.g. `weight`. */
  field: string;
  /** The argument naming its unit, e.g. `weight_unit`; absent for fixed-unit quantities. */
  unitField?: string;
  /** The unit computations use. */
  canonical: string;
  /** Accepted units (as written in the schema) and the factor converting each to `canonical`. */
  units: Readonly<Record<string, number>>;
  min: number;
  max: number;
}

/** Creatinine: 1 mg/dL = 88.4 µmol/L (molar mass 113.12 g/mol). */
export const CREATININE_UMOL_PER_MG_DL = 88.4;
/** Calcium: 1 mmol/L = 4.008 mg/dL (molar mass 40.08 g/mol). */
export const CALCIUM_MG_DL_PER_MMOL_L = 4.008;
/** Blood urea nitrogen: 1 mmol/L of urea carries 2.8014 mg/dL of nitrogen (2 N, 14.007 g/mol). */
export const BUN_MG_DL_PER_UREA_MMOL_L = 2.8014;
export const KG_PER_LB = 0.45359237;
export const CM_PER_IN = 2.54;

export const WEIGHT: Quantity = {
  field: 'weight',
  unitField: 'weight_unit',
  canonical: 'kg',
  units: { kg: 1, lb: KG_PER_LB },
  min: 1,
  max: 400,
};

export const HEIGHT: Quantity = {
  field: 'height',
  unitField: 'height_unit',
  canonical: 'cm',
  units: { cm: 1, m: 100, in: CM_PER_IN },
  min: 30,
  max: 250,
};

export const CREATININE: Quantity = {
  field: 'creatinine',
  unitField: 'creatinine_unit',
  canonical: 'mg/dL',
  units: { 'mg/dL': 1, 'umol/L': 1 / CREATININE_UMOL_PER_MG_DL },
  min: 0.1,
  max: 25,
};

export const CALCIUM: Quantity = {
  field: 'calcium',
  unitField: 'calcium_unit',
  canonical: 'mmol/L',
  units: { 'mmol/L': 1, 'mg/dL': 1 / CALCIUM_MG_DL_PER_MMOL_L },
  min: 1,
  max: 5,
};

export const ALBUMIN: Quantity = {
  field: 'albumin',
  unitField: 'albumin_unit',
  canonical: 'g/L',
  units: { 'g/L': 1, 'g/dL': 10 },
  min: 5,
  max: 70,
};

/** Every age-taking calculator here is validated for adults only. */
export const AGE: Quantity = { field: 'age', canonical: 'years', units: {}, min: 18, max: 120 };

export const SYSTOLIC: Quantity = {
  field: 'systolic',
  canonical: 'mmHg',
  units: {},
  min: 40,
  max: 300,
};
export const DIASTOLIC: Quantity = {
  field: 'diastolic',
  canonical: 'mmHg',
  units: {},
  min: 20,
  max: 200,
};

export const SODIUM: Quantity = {
  field: 'sodium',
  canonical: 'mmol/L',
  units: {},
  min: 100,
  max: 200,
};
export const CHLORIDE: Quantity = {
  field: 'chloride',
  canonical: 'mmol/L',
  units: {},
  min: 50,
  max: 150,
};
export const BICARBONATE: Quantity = {
  field: 'bicarbonate',
  canonical: 'mmol/L',
  units: {},
  min: 1,
  max: 60,
};
export const POTASSIUM: Quantity = {
  field: 'potassium',
  canonical: 'mmol/L',
  units: {},
  min: 1,
  max: 10,
};

export const UREA: Quantity = { field: 'urea', canonical: 'mmol/L', units: {}, min: 0.5, max: 100 };
export const BUN: Quantity = { field: 'bun', canonical: 'mg/dL', units: {}, min: 1, max: 280 };
export const RESPIRATORY_RATE: Quantity = {
  field: 'respiratory_rate',
  canonical: 'breaths/min',
  units: {},
  min: 4,
  max: 80,
};

/** Lower case, no spaces, micro signs as `u`: `µmol/L`, `umol/l` and `micromol/L` all match. */
export function normaliseUnit(unit: string): string {
  return unit
    .trim()
    .toLowerCase()
    .replace(/\s+/g, '')
    .replace(/[µμ]/g, 'u')
    .replace(/^micromol/, 'umol');
}

const UNIT_ALIASES: Readonly<Record<string, string>> = {
  kgs: 'kg',
  kilogram: 'kg',
  kilograms: 'kg',
  lbs: 'lb',
  pound: 'lb',
  pounds: 'lb',
  meter: 'm',
  metre: 'm',
  meters: 'm',
  metres: 'm',
  inch: 'in',
  inches: 'in',
};

/** The schema spelling of `unit` among `accepted`, or undefined when it is none of them. */
export function matchUnit(unit: string, accepted: readonly string[]): string | undefined {
  const written = normaliseUnit(unit);
  const wanted = UNIT_ALIASES[written] ?? written;
  return accepted.find((name) => normaliseUnit(name) === wanted);
}

/** Rounds half away from zero to `digits` decimals (`round(2.45, 1) === 2.5`). */
export function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  const scaled = Math.abs(value) * factor;
  // A relative nudge keeps values such as 1.005 (stored as 1.00499...) rounding as written.
  const rounded = Math.round(scaled * (1 + Number.EPSILON * 4)) / factor;
  return Math.sign(value) * rounded + 0;
}
