import { CALCULATOR_NAMES, type CalculatorName } from './result.js';

const LABELS: Readonly<Record<CalculatorName, string>> = {
  bmi: 'BMI',
  bsa: 'body surface area (Mosteller)',
  egfr: 'eGFR (CKD-EPI 2021)',
  cockcroft_gault: 'creatinine clearance (Cockcroft-Gault)',
  map: 'mean arterial pressure',
  anion_gap: 'anion gap',
  corrected_calcium: 'albumin-corrected calcium',
  cha2ds2_vasc: 'CHA₂DS₂-VASc score',
  has_bled: 'HAS-BLED score',
  curb_65: 'CURB-65 score',
  wells_dvt: 'Wells DVT score',
};

/** Calculators whose values carry a fixed number of decimals. */
const FIXED_DECIMALS: ReadonlySet<string> = new Set(['bmi', 'bsa', 'corrected_calcium']);

const UNIT_TEXT: Readonly<Record<string, string>> = {
  'kg/m2': 'kg/m²',
  m2: 'm²',
  'mL/min/1.73m2': 'mL/min/1.73 m²',
};

function unitText(unit: unknown, value: number): string {
  if (unit === 'points') return Math.abs(value) === 1 ? 'point' : 'points';
  return typeof unit === 'string' ? (UNIT_TEXT[unit] ?? unit) : '';
}

/** Decimals each unit is reported with (BMI 24.0, not 24); others print as they are. */
const DECIMALS: Readonly<Record<string, number>> = { 'kg/m2': 1, m2: 2, 'mmol/L': 2, 'mg/dL': 1 };

function quantity(value: unknown, unit: unknown, fixed: boolean): string | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  const decimals = fixed && typeof unit === 'string' ? DECIMALS[unit] : undefined;
  const number = decimals === undefined ? String(value) : value.toFixed(decimals);
  return `${number} ${unitText(unit, value)}`.trim();
}

function alternativeText(alternative: unknown): string {
  if (typeof alternative !== 'object' || alternative === null) return '';
  const { value, unit } = alternative as Record<string, unknown>;
  const text = quantity(value, unit, true);
  return text === null ? '' : `, or ${text}`;
}

function criteriaText(counted: unknown): string {
  if (!Array.isArray(counted)) return '';
  const items = counted.flatMap((item: unknown) => {
    if (typeof item !== 'object' || item === null) return [];
    const { criterion, points } = item as Record<string, unknown>;
    if (typeof criterion !== 'string' || typeof points !== 'number') return [];
    return [`${criterion} (${points > 0 ? '+' : ''}${points})`];
  });
  return items.length === 0 ? ' No criteria counted.' : ` Counted: ${items.join('; ')}.`;
}

function isCalculatorName(value: unknown): value is CalculatorName {
  return typeof value === 'string' && (CALCULATOR_NAMES as readonly string[]).includes(value);
}

/**
 * One or two plain sentences stating a `medical_calculator` result for the user, e.g. "The BMI is
 * 24.7 kg/m² (normal weight)." Anything that is not such a result gets a neutral sentence.
 */
export function describeCalculation(result: Record<string, unknown>): string {
  const name = result.calculator;
  const value = quantity(result.value, result.unit, FIXED_DECIMALS.has(String(result.calculator)));
  if (!isCalculatorName(name) || value === null) {
    return 'The calculation did not produce a result.';
  }
  const interpretation = result.interpretation;
  const reading =
    typeof interpretation === 'string' && interpretation !== '' ? ` (${interpretation})` : '';
  const sentence = `The ${LABELS[name]} is ${value}${alternativeText(result.alternative)}${reading}.`;
  return 'criteria_counted' in result ? sentence + criteriaText(result.criteria_counted) : sentence;
}
