import { readFlag } from './args.js';
import { flags, tally, type Calculator, type Criterion } from './result.js';

const WELLS_ITEMS: readonly (readonly [string, string, number])[] = [
  ['active_cancer', 'active cancer (treatment within 6 months or palliative)', 1],
  ['paralysis_or_recent_cast', 'paralysis, paresis or recent plaster cast of a leg', 1],
  ['bedridden_or_recent_surgery', 'bedridden >= 3 days or major surgery within 12 weeks', 1],
  ['localized_tenderness', 'localised tenderness along the deep venous system', 1],
  ['entire_leg_swollen', 'entire leg swollen', 1],
  ['calf_swelling', 'calf swelling >= 3 cm compared with the other leg', 1],
  ['pitting_edema', 'pitting oedema confined to the symptomatic leg', 1],
  ['collateral_superficial_veins', 'collateral superficial veins (non-varicose)', 1],
  ['previous_dvt', 'previously documented DVT', 1],
  ['alternative_diagnosis_likely', 'alternative diagnosis at least as likely as DVT', -2],
];

function probability(score: number): string {
  const twoLevel = score >= 2 ? 'DVT likely' : 'DVT unlikely';
  const threeLevel = score >= 3 ? 'high' : score >= 1 ? 'moderate' : 'low';
  return `${twoLevel}; ${threeLevel} pre-test probability on the three-level scale`;
}

export const wellsDvtCalculator: Calculator = {
  name: 'wells_dvt',
  fields: WELLS_ITEMS.map(([key]) => key),
  compute(args) {
    const criteria: Criterion[] = WELLS_ITEMS.map(([key, label, points]) => ({
      key,
      label,
      points,
      met: readFlag(args, key),
    }));
    const { total, counted } = tally(criteria);
    return {
      calculator: 'wells_dvt',
      value: total,
      unit: 'points',
      interpretation: probability(total),
      inputs: flags(criteria),
      criteria_counted: counted,
      min_points: -2,
      max_points: 9,
      formula:
        'one point for each clinical feature, minus 2 when an alternative diagnosis is at least ' +
        'as likely; two-level: >= 2 likely, < 2 unlikely; three-level: <= 0 low, 1-2 moderate, >= 3 high',
      reference:
        'Wells PS et al. Evaluation of D-dimer in the diagnosis of suspected deep-vein ' +
        'thrombosis. N Engl J Med 2003;349:1227-35 (two-level, with previous DVT); Wells PS et al. ' +
        'Value of assessment of pretest probability of deep-vein thrombosis in clinical ' +
        'management. Lancet 1997;350:1795-8 (three-level)',
      notes: [
        'DVT unlikely: a negative D-dimer can exclude DVT; DVT likely: proceed to ultrasound.',
      ],
    };
  },
};
