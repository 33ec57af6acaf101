import { ToolError } from '../types.js';
import { checkPressures, isGiven, readFlag, readQuantity, type Args } from './args.js';
import { flags, tally, type Calculator, type Criterion } from './result.js';
import {
  AGE,
  BUN,
  BUN_MG_DL_PER_UREA_MMOL_L,
  DIASTOLIC,
  RESPIRATORY_RATE,
  round,
  SYSTOLIC,
  UREA,
} from './units.js';

/** Urea in mmol/L, from `urea` (mmol/L) or `bun` (blood urea nitrogen, mg/dL): exactly one. */
function readUrea(args: Args): number {
  const hasUrea = isGiven(args, 'urea');
  const hasBun = isGiven(args, 'bun');
  if (hasUrea && hasBun) throw new ToolError('give urea (mmol/L) or bun (mg/dL), not both');
  if (hasBun) return readQuantity(args, BUN) / BUN_MG_DL_PER_UREA_MMOL_L;
  if (!hasUrea) throw new ToolError('urea (mmol/L) or bun (mg/dL) is required');
  return readQuantity(args, UREA);
}

function severity(score: number): string {
  if (score <= 1) return 'low severity: consider treatment at home';
  if (score === 2) return 'moderate severity: consider hospital-supervised treatment';
  if (score === 3) return 'high severity: manage in hospital as severe pneumonia';
  return 'high severity: manage in hospital as severe pneumonia and assess for intensive care';
}

interface CurbInputs {
  confusion: boolean;
  urea: number;
  rate: number;
  systolic: number;
  diastolic: number;
  age: number;
}

function readInputs(args: Args): CurbInputs {
  const confusion = readFlag(args, 'confusion');
  const urea = readUrea(args);
  const rate = readQuantity(args, RESPIRATORY_RATE);
  const systolic = readQuantity(args, SYSTOLIC);
  const diastolic = readQuantity(args, DIASTOLIC);
  checkPressures(systolic, diastolic);
  return { confusion, urea, rate, systolic, diastolic, age: readQuantity(args, AGE) };
}

function criteriaOf(inputs: CurbInputs): Criterion[] {
  const { confusion, urea, rate, systolic, diastolic, age } = inputs;
  const criterion = (key: string, label: string, met: boolean): Criterion => ({
    key,
    label,
    points: 1,
    met,
  });
  return [
    criterion('confusion', 'confusion', confusion),
    criterion('urea_over_7', 'urea > 7 mmol/L (BUN > 19 mg/dL)', urea > 7),
    criterion('respiratory_rate_30_or_more', 'respiratory rate >= 30/min', rate >= 30),
    criterion(
      'low_blood_pressure',
      'systolic < 90 or diastolic <= 60 mmHg',
      systolic < 90 || diastolic <= 60,
    ),
    criterion('age_65_or_over', 'age 65 or over', age >= 65),
  ];
}

export const curb65Calculator: Calculator = {
  name: 'curb_65',
  fields: ['confusion', 'urea', 'bun', 'respiratory_rate', 'systolic', 'diastolic', 'age'],
  compute(args) {
    const inputs = readInputs(args);
    const criteria = criteriaOf(inputs);
    const { total, counted } = tally(criteria);
    return {
      calculator: 'curb_65',
      value: total,
      unit: 'points',
      interpretation: severity(total),
      inputs: {
        urea_mmol_l: round(inputs.urea, 2),
        respiratory_rate_per_min: inputs.rate,
        systolic_mmhg: inputs.systolic,
        diastolic_mmhg: inputs.diastolic,
        age_years: inputs.age,
        ...flags(criteria),
      },
      criteria_counted: counted,
      min_points: 0,
      max_points: 5,
      formula:
        'one point each: Confusion, Urea > 7 mmol/L, Respiratory rate >= 30, Blood pressure ' +
        '(systolic < 90 or diastolic <= 60), age >= 65',
      reference:
        'Lim WS et al. Defining community acquired pneumonia severity on presentation to ' +
        'hospital: an international derivation and validation study. Thorax 2003;58:377-82; ' +
        'management bands: BTS CAP guideline 2009',
      notes: [
        'For community-acquired pneumonia in adults; clinical judgement overrides the score.',
      ],
    };
  },
};
