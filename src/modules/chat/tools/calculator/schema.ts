import type { LlmTool } from '../../../../providers/llm/types.js';
import { CALCULATOR_NAMES } from './result.js';

const DESCRIPTION = [
  'Computes a standard medical calculation from numbers and findings the user gave. Never guess ' +
    'or invent an input: if one is missing, ask for it. Pass only the arguments the chosen ' +
    'calculator takes; numbers as JSON numbers, yes/no criteria as JSON booleans (omitted = absent).',
  'Calculators and their arguments:',
  '- bmi, bsa (Mosteller): weight + weight_unit, height + height_unit (feet and inches: convert ' +
    'to inches).',
  '- egfr (CKD-EPI 2021, race-free, adults): age, sex, creatinine + creatinine_unit.',
  '- cockcroft_gault (creatinine clearance): age, sex, weight + weight_unit, creatinine + ' +
    'creatinine_unit.',
  '- map (mean arterial pressure): systolic, diastolic.',
  '- anion_gap: sodium, chloride, bicarbonate, optional potassium.',
  '- corrected_calcium (albumin-corrected): calcium + calcium_unit, albumin + albumin_unit.',
  '- cha2ds2_vasc: age, sex, congestive_heart_failure, hypertension, diabetes, ' +
    'stroke_tia_thromboembolism, vascular_disease.',
  '- has_bled: age (optional; if omitted the elderly criterion counts absent), ' +
    'uncontrolled_hypertension, abnormal_renal_function, abnormal_liver_function, prior_stroke, ' +
    'bleeding_history, labile_inr, antiplatelet_or_nsaid, alcohol_excess.',
  '- curb_65: confusion, urea (mmol/L) or bun (mg/dL), respiratory_rate, systolic, diastolic, age.',
  '- wells_dvt: active_cancer, paralysis_or_recent_cast, bedridden_or_recent_surgery, ' +
    'localized_tenderness, entire_leg_swollen, calf_swelling, pitting_edema, ' +
    'collateral_superficial_veins, previous_dvt, alternative_diagnosis_likely.',
  'Accepted ranges (others are refused as implausible): age 18-120 years; weight 1-400 kg; ' +
    'height 30-250 cm; creatinine 0.1-25 mg/dL (8.84-2210 umol/L); systolic 40-300 and diastolic ' +
    '20-200 mmHg, systolic above diastolic; sodium 100-200, chloride 50-150, bicarbonate 1-60, ' +
    'potassium 1-10 mmol/L; calcium 1-5 mmol/L (4.0-20 mg/dL); albumin 5-70 g/L (0.5-7 g/dL); ' +
    'urea 0.5-100 mmol/L; bun 1-280 mg/dL; respiratory_rate 4-80/min.',
  'Returns value, unit, interpretation, the inputs as used (canonical units), the formula and its ' +
    'reference; scores also list the criteria that counted. Example: {"calculator": "bmi", ' +
    '"weight": 80, "weight_unit": "kg", "height": 180, "height_unit": "cm"}.',
].join('\n');

const number = (description: string): Record<string, unknown> => ({ type: 'number', description });
const flag = (description: string): Record<string, unknown> => ({ type: 'boolean', description });
const unit = (values: string[]): Record<string, unknown> => ({ type: 'string', enum: values });

const PROPERTIES: Record<string, Record<string, unknown>> = {
  calculator: { type: 'string', enum: [...CALCULATOR_NAMES], description: 'Which calculation.' },
  weight: number('Body weight (actual weight).'),
  weight_unit: unit(['kg', 'lb']),
  height: number('Height.'),
  height_unit: unit(['cm', 'm', 'in']),
  age: number('Age in years (adults, 18-120).'),
  sex: { type: 'string', enum: ['female', 'male'], description: 'Sex recorded for the equation.' },
  creatinine: number('Serum creatinine.'),
  creatinine_unit: unit(['mg/dL', 'umol/L']),
  systolic: number('Systolic blood pressure, mmHg.'),
  diastolic: number('Diastolic blood pressure, mmHg.'),
  sodium: number('Serum sodium, mmol/L (= mEq/L).'),
  chloride: number('Serum chloride, mmol/L.'),
  bicarbonate: number('Serum bicarbonate (total CO2), mmol/L.'),
  potassium: number('Serum potassium, mmol/L (optional for anion_gap).'),
  calcium: number('Total serum calcium.'),
  calcium_unit: unit(['mg/dL', 'mmol/L']),
  albumin: number('Serum albumin.'),
  albumin_unit: unit(['g/dL', 'g/L']),
  urea: number('Serum urea, mmol/L (give urea or bun, not both).'),
  bun: number('Blood urea nitrogen, mg/dL (give urea or bun, not both).'),
  respiratory_rate: number('Respiratory rate, breaths per minute.'),
  confusion: flag('New mental confusion (CURB-65).'),
  congestive_heart_failure: flag('Heart failure or LV systolic dysfunction.'),
  hypertension: flag('Hypertension (CHA2DS2-VASc).'),
  diabetes: flag('Diabetes mellitus.'),
  stroke_tia_thromboembolism: flag('Prior stroke, TIA or thromboembolism (2 points).'),
  vascular_disease: flag('Prior MI, peripheral artery disease or aortic plaque.'),
  uncontrolled_hypertension: flag('HAS-BLED: uncontrolled hypertension, systolic > 160 mmHg.'),
  abnormal_renal_function: flag(
    'HAS-BLED: dialysis, kidney transplant or creatinine >= 200 umol/L (2.26 mg/dL).',
  ),
  abnormal_liver_function: flag(
    'HAS-BLED: cirrhosis, or bilirubin > 2x and AST/ALT/ALP > 3x upper limit of normal.',
  ),
  prior_stroke: flag('HAS-BLED: prior stroke.'),
  bleeding_history: flag('HAS-BLED: major bleeding history or predisposition (e.g. anaemia).'),
  labile_inr: flag('HAS-BLED: unstable or high INRs, time in therapeutic range < 60%.'),
  antiplatelet_or_nsaid: flag('HAS-BLED: concomitant antiplatelet or NSAID use.'),
  alcohol_excess: flag('HAS-BLED: alcohol use >= 8 drinks a week.'),
  active_cancer: flag('Wells: active cancer (treated within 6 months or palliative).'),
  paralysis_or_recent_cast: flag('Wells: paralysis, paresis or recent plaster cast of a leg.'),
  bedridden_or_recent_surgery: flag('Wells: bedridden >= 3 days or major surgery within 12 weeks.'),
  localized_tenderness: flag('Wells: localised tenderness along the deep venous system.'),
  entire_leg_swollen: flag('Wells: entire leg swollen.'),
  calf_swelling: flag('Wells: calf swelling >= 3 cm compared with the other leg.'),
  pitting_edema: flag('Wells: pitting oedema confined to the symptomatic leg.'),
  collateral_superficial_veins: flag('Wells: collateral superficial veins (non-varicose).'),
  previous_dvt: flag('Wells: previously documented DVT.'),
  alternative_diagnosis_likely: flag('Wells: alternative diagnosis at least as likely (-2).'),
};

export const calculatorDefinition: LlmTool = {
  name: 'medical_calculator',
  description: DESCRIPTION,
  parameters: {
    type: 'object',
    properties: PROPERTIES,
    required: ['calculator'],
    additionalProperties: false,
  },
};
