import { isGiven, readFlag, readQuantity, readSex, type Args } from './args.js';
import { flags, tally, type Calculator, type Criterion } from './result.js';
import { AGE } from './units.js';

function chaCriteria(args: Args, age: number, female: boolean): Criterion[] {
  const flag = (key: string, label: string, points = 1): Criterion => ({
    key,
    label,
    points,
    met: readFlag(args, key),
  });
  return [
    flag('congestive_heart_failure', 'congestive heart failure or LV dysfunction'),
    flag('hypertension', 'hypertension'),
    { key: 'age_75_or_over', label: 'age 75 or over', points: 2, met: age >= 75 },
    flag('diabetes', 'diabetes mellitus'),
    flag('stroke_tia_thromboembolism', 'prior stroke, TIA or thromboembolism', 2),
    flag(
      'vascular_disease',
      'vascular disease (prior MI, peripheral artery disease, aortic plaque)',
    ),
    { key: 'age_65_to_74', label: 'age 65 to 74', points: 1, met: age >= 65 && age < 75 },
    { key: 'female_sex', label: 'female sex', points: 1, met: female },
  ];
}

/** ESC 2020 reads the score without the point for female sex (a risk modifier only). */
function strokeRisk(scoreWithoutSex: number): string {
  if (scoreWithoutSex === 0) return 'low stroke risk: oral anticoagulation is not indicated';
  if (scoreWithoutSex === 1) return 'intermediate stroke risk: consider oral anticoagulation';
  return 'high stroke risk: oral anticoagulation is recommended';
}

export const cha2ds2VascCalculator: Calculator = {
  name: 'cha2ds2_vasc',
  fields: [
    'age',
    'sex',
    'congestive_heart_failure',
    'hypertension',
    'diabetes',
    'stroke_tia_thromboembolism',
    'vascular_disease',
  ],
  compute(args) {
    const age = readQuantity(args, AGE);
    const sex = readSex(args);
    const criteria = chaCriteria(args, age, sex === 'female');
    const { total, counted } = tally(criteria);
    return {
      calculator: 'cha2ds2_vasc',
      value: total,
      unit: 'points',
      interpretation: strokeRisk(total - (sex === 'female' ? 1 : 0)),
      inputs: { age_years: age, sex, ...flags(criteria) },
      criteria_counted: counted,
      min_points: 0,
      max_points: 9,
      formula:
        'C 1, H 1, A2 (age >= 75) 2, D 1, S2 (stroke/TIA/thromboembolism) 2, V 1, ' +
        'A (age 65-74) 1, Sc (female) 1',
      reference:
        'Lip GYH et al. Refining clinical risk stratification for predicting stroke and ' +
        'thromboembolism in atrial fibrillation. Chest 2010;137:263-72; thresholds: ESC 2020 AF ' +
        'guideline (Hindricks G et al. Eur Heart J 2021;42:373-498)',
      notes: [
        'For atrial fibrillation. Thresholds: men 0 low, 1 consider, >=2 recommend; women one ' +
          'point higher. The ESC 2024 guideline uses CHA2DS2-VA, without the sex point.',
      ],
    };
  },
};

const HAS_BLED_FLAGS: readonly (readonly [string, string])[] = [
  ['uncontrolled_hypertension', 'uncontrolled hypertension (systolic > 160 mmHg)'],
  ['abnormal_renal_function', 'abnormal renal function'],
  ['abnormal_liver_function', 'abnormal liver function'],
  ['prior_stroke', 'prior stroke'],
  ['bleeding_history', 'bleeding history or predisposition'],
  ['labile_inr', 'labile INR'],
  ['elderly', 'elderly (age > 65)'],
  ['antiplatelet_or_nsaid', 'antiplatelet or NSAID use'],
  ['alcohol_excess', 'alcohol excess (>= 8 drinks a week)'],
];

function bleedingRisk(score: number): string {
  if (score === 0) return 'low bleeding risk';
  if (score <= 2) return 'moderate bleeding risk';
  return 'high bleeding risk: correct modifiable factors and review more often; not by itself a reason to withhold anticoagulation';
}

export const hasBledCalculator: Calculator = {
  name: 'has_bled',
  fields: ['age', ...HAS_BLED_FLAGS.map(([key]) => key).filter((key) => key !== 'elderly')],
  compute(args) {
    const age = isGiven(args, 'age') ? readQuantity(args, AGE) : null;
    const criteria: Criterion[] = HAS_BLED_FLAGS.map(([key, label]) =>
      key === 'elderly'
        ? { key, label, points: 1, met: age !== null && age > 65 }
        : { key, label, points: 1, met: readFlag(args, key) },
    );
    const { total, counted } = tally(criteria);
    return {
      calculator: 'has_bled',
      value: total,
      unit: 'points',
      interpretation: bleedingRisk(total),
      inputs: { age_years: age, ...flags(criteria) },
      criteria_counted: counted,
      min_points: 0,
      max_points: 9,
      formula:
        'one point each: H uncontrolled hypertension, A abnormal renal / liver function (1 each), ' +
        'S stroke, B bleeding, L labile INR, E elderly > 65, D drugs / alcohol (1 each)',
      reference:
        'Pisters R et al. A novel user-friendly score (HAS-BLED) to assess 1-year risk of major ' +
        'bleeding in patients with atrial fibrillation. Chest 2010;138:1093-100 (>= 3: high risk)',
      notes:
        age === null
          ? ['Age was not given: the elderly criterion (age > 65) was counted as absent.']
          : [],
    };
  },
};
