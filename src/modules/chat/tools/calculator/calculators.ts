import { ToolError } from '../types.js';
import { checkFields, type Args } from './args.js';
import { cha2ds2VascCalculator, hasBledCalculator } from './af-scores.js';
import { bmiCalculator, bsaCalculator } from './anthropometry.js';
import { anionGapCalculator, correctedCalciumCalculator } from './chemistry.js';
import { curb65Calculator } from './curb65.js';
import { mapCalculator } from './pressure.js';
import { cockcroftGaultCalculator, egfrCalculator } from './renal.js';
import {
  CALCULATOR_NAMES,
  type CalculationResult,
  type Calculator,
  type CalculatorName,
} from './result.js';
import { wellsDvtCalculator } from './wells-dvt.js';

const CALCULATORS: Readonly<Record<CalculatorName, Calculator>> = {
  bmi: bmiCalculator,
  bsa: bsaCalculator,
  egfr: egfrCalculator,
  cockcroft_gault: cockcroftGaultCalculator,
  map: mapCalculator,
  anion_gap: anionGapCalculator,
  corrected_calcium: correctedCalciumCalculator,
  cha2ds2_vasc: cha2ds2VascCalculator,
  has_bled: hasBledCalculator,
  curb_65: curb65Calculator,
  wells_dvt: wellsDvtCalculator,
};

/** Every argument name some calculator takes, `calculator` included. */
export const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  'calculator',
  ...Object.values(CALCULATORS).flatMap((c) => c.fields),
]);

export function fieldsOf(name: CalculatorName): readonly string[] {
  return CALCULATORS[name].fields;
}

function isCalculatorName(value: unknown): value is CalculatorName {
  return typeof value === 'string' && (CALCULATOR_NAMES as readonly string[]).includes(value);
}

/** Validates and computes: every refusal is a ToolError naming the argument at fault. */
export function calculate(args: Args): CalculationResult {
  const name = args.calculator;
  if (name === undefined || name === null) {
    throw new ToolError(`calculator is required (one of: ${CALCULATOR_NAMES.join(', ')})`);
  }
  if (!isCalculatorName(name)) {
    throw new ToolError(`calculator must be one of: ${CALCULATOR_NAMES.join(', ')}`);
  }
  const calculator = CALCULATORS[name];
  checkFields(args, name, calculator.fields, KNOWN_FIELDS);
  return calculator.compute(args);
}
