import { ToolError } from '../types.js';
import { readQuantity, type Args } from './args.js';
import type { Calculator } from './result.js';
import { HEIGHT, round, WEIGHT } from './units.js';

const BODY_FIELDS = ['weight', 'weight_unit', 'height', 'height_unit'] as const;

/** A weight and height that are each plausible can still be impossible together. */
const BMI_PLAUSIBLE = { min: 7, max: 150 };

function readBody(args: Args): { weightKg: number; heightCm: number; bmi: number } {
  const weightKg = readQuantity(args, WEIGHT);
  const heightCm = readQuantity(args, HEIGHT);
  const bmi = weightKg / (heightCm / 100) ** 2;
  if (bmi < BMI_PLAUSIBLE.min || bmi > BMI_PLAUSIBLE.max) {
    throw new ToolError(
      'weight and height are implausible together: check the numbers and their units',
    );
  }
  return { weightKg, heightCm, bmi };
}

/** WHO adult categories, read from the value rounded to one decimal. */
function bmiCategory(bmi: number): string {
  if (bmi < 18.5) return 'underweight';
  if (bmi < 25) return 'normal weight';
  if (bmi < 30) return 'overweight';
  if (bmi < 35) return 'obesity class I';
  if (bmi < 40) return 'obesity class II';
  return 'obesity class III';
}

export const bmiCalculator: Calculator = {
  name: 'bmi',
  fields: BODY_FIELDS,
  compute(args) {
    const { weightKg, heightCm, bmi } = readBody(args);
    const value = round(bmi, 1);
    return {
      calculator: 'bmi',
      value,
      unit: 'kg/m2',
      interpretation: bmiCategory(value),
      inputs: { weight_kg: round(weightKg, 2), height_m: round(heightCm / 100, 3) },
      formula: 'BMI = weight (kg) / height (m)^2',
      reference:
        'WHO adult BMI classification (WHO Technical Report Series 894, 2000): <18.5 underweight, ' +
        '18.5-24.9 normal, 25-29.9 overweight, 30-34.9 / 35-39.9 / >=40 obesity class I / II / III',
      notes: ['Adult categories: children and adolescents need BMI-for-age centiles.'],
    };
  },
};

export const bsaCalculator: Calculator = {
  name: 'bsa',
  fields: BODY_FIELDS,
  compute(args) {
    const { weightKg, heightCm } = readBody(args);
    return {
      calculator: 'bsa',
      value: round(Math.sqrt((heightCm * weightKg) / 3600), 2),
      unit: 'm2',
      interpretation: 'used for dosing and indexing; it has no risk categories',
      inputs: { weight_kg: round(weightKg, 2), height_cm: round(heightCm, 1) },
      formula: 'BSA = sqrt(height (cm) x weight (kg) / 3600)',
      reference:
        'Mosteller RD. Simplified calculation of body-surface area. N Engl J Med 1987;317:1098',
    };
  },
};
