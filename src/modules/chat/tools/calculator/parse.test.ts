import { describe, expect, it } from 'vitest';
import { medicalCalculatorTool, parseCalculatorRequest } from './index.js';

const noCriteria = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, false]));
const CHA = [
  'congestive_heart_failure',
  'hypertension',
  'diabetes',
  'stroke_tia_thromboembolism',
  'vascular_disease',
];
const HAS_BLED = [
  'uncontrolled_hypertension',
  'abnormal_renal_function',
  'abnormal_liver_function',
  'prior_stroke',
  'bleeding_history',
  'labile_inr',
  'antiplatelet_or_nsaid',
  'alcohol_excess',
];
const WELLS = [
  'active_cancer',
  'paralysis_or_recent_cast',
  'bedridden_or_recent_surgery',
  'localized_tenderness',
  'entire_leg_swollen',
  'calf_swelling',
  'pitting_edema',
  'collateral_superficial_veins',
  'previous_dvt',
  'alternative_diagnosis_likely',
];

describe('parseCalculatorRequest: requests it recognises', () => {
  it.each([
    [
      'BMI for 80 kg and 1.80 m',
      { calculator: 'bmi', weight: 80, weight_unit: 'kg', height: 1.8, height_unit: 'm' },
    ],
    [
      'What is the BMI of a 176 lb patient who is 5 ft 9 in?',
      { calculator: 'bmi', weight: 176, weight_unit: 'lb', height: 69, height_unit: 'in' },
    ],
    [
      'eGFR for a 60 year old woman with creatinine 1.2 mg/dL',
      { calculator: 'egfr', age: 60, sex: 'female', creatinine: 1.2, creatinine_unit: 'mg/dL' },
    ],
    [
      'eGFR for a 45-year-old man, creatinine 110 umol/L',
      { calculator: 'egfr', age: 45, sex: 'male', creatinine: 110, creatinine_unit: 'umol/L' },
    ],
    [
      'eGFR for a 45-year-old man, creatinine 110 µmol/L',
      { calculator: 'egfr', age: 45, sex: 'male', creatinine: 110, creatinine_unit: 'umol/L' },
    ],
    [
      'CHA2DS2-VASc for a 76-year-old woman with hypertension',
      {
        calculator: 'cha2ds2_vasc',
        age: 76,
        sex: 'female',
        ...noCriteria(CHA),
        hypertension: true,
      },
    ],
    [
      'HAS-BLED for a 72-year-old on aspirin with labile INR and prior stroke, no alcohol excess',
      {
        calculator: 'has_bled',
        age: 72,
        ...noCriteria(HAS_BLED),
        antiplatelet_or_nsaid: true,
        labile_inr: true,
        prior_stroke: true,
      },
    ],
    [
      'CURB-65 for a 70 year old with confusion, urea 8 mmol/L, respiratory rate 32, BP 85/50',
      {
        calculator: 'curb_65',
        confusion: true,
        urea: 8,
        respiratory_rate: 32,
        systolic: 85,
        diastolic: 50,
        age: 70,
      },
    ],
    ['MAP for BP 120/80', { calculator: 'map', systolic: 120, diastolic: 80 }],
    [
      'anion gap Na 140 Cl 100 HCO3 24',
      { calculator: 'anion_gap', sodium: 140, chloride: 100, bicarbonate: 24 },
    ],
    [
      'corrected calcium 8.0 mg/dL albumin 2.5 g/dL',
      {
        calculator: 'corrected_calcium',
        calcium: 8,
        calcium_unit: 'mg/dL',
        albumin: 2.5,
        albumin_unit: 'g/dL',
      },
    ],
    [
      'Cockcroft-Gault for a 70 year old man, 72 kg, creatinine 1.0 mg/dL',
      {
        calculator: 'cockcroft_gault',
        age: 70,
        sex: 'male',
        weight: 72,
        weight_unit: 'kg',
        creatinine: 1,
        creatinine_unit: 'mg/dL',
      },
    ],
    [
      'BSA for 70 kg and 170 cm',
      { calculator: 'bsa', weight: 70, weight_unit: 'kg', height: 170, height_unit: 'cm' },
    ],
    [
      'Wells DVT score with active cancer and calf swelling',
      { calculator: 'wells_dvt', ...noCriteria(WELLS), active_cancer: true, calf_swelling: true },
    ],
  ])('%s', async (text, expected) => {
    const args = parseCalculatorRequest(text);
    expect(args).toEqual(expected);
    // Each parsed request is one the tool accepts.
    await expect(
      medicalCalculatorTool.run(args ?? {}, { userId: 'u', signal: new AbortController().signal }),
    ).resolves.toMatchObject({
      calculator: expected.calculator,
    });
  });
});

describe('parseCalculatorRequest: wording, units and negation', () => {
  const parse = parseCalculatorRequest;

  it('heights in feet and inches however written', () => {
    for (const text of [
      'BMI for 150 lbs, 5\'9"',
      'body mass index, 150 pounds, 5 feet 9 inches',
      'BMI 150 lb 5 ft 9',
      'BMI for 150 lb and 69 inches',
    ]) {
      expect(parse(text), text).toMatchObject({
        height: 69,
        height_unit: 'in',
        weight: 150,
        weight_unit: 'lb',
      });
    }
    expect(parse('BMI for 150 lb, 6 ft')).toMatchObject({ height: 72, height_unit: 'in' });
  });

  it('creatinine without a unit: up to 15 read as mg/dL, from 30 as µmol/L, in between not at all', () => {
    expect(parse('eGFR 60 yo female creatinine 1.2')).toMatchObject({
      creatinine: 1.2,
      creatinine_unit: 'mg/dL',
    });
    expect(parse('eGFR 60 yo female, Cr 106')).toMatchObject({
      creatinine: 106,
      creatinine_unit: 'umol/L',
    });
    expect(parse('eGFR 60 yo female creatinine 20')).toBeNull();
  });

  it('sex from nouns, short forms and pronouns; none when both are said', () => {
    expect(parse('eGFR, 76F, creatinine 1.0 mg/dL')).toMatchObject({ age: 76, sex: 'female' });
    expect(parse('eGFR 54 yo M creatinine 0.9 mg/dl')).toMatchObject({ age: 54, sex: 'male' });
    expect(parse('eGFR: she is 50 years old, creatinine 0.8 mg/dL')).toMatchObject({
      sex: 'female',
    });
    expect(parse('eGFR for a man or a woman aged 50 with creatinine 0.8 mg/dL')).toBeNull();
  });

  it('negated criteria count as absent', () => {
    const args = parseCalculatorRequest(
      'CHA2DS2-VASc for a 68 year old man with diabetes and heart failure but no hypertension, no history of stroke or TIA',
    );
    expect(args).toEqual({
      calculator: 'cha2ds2_vasc',
      age: 68,
      sex: 'male',
      ...noCriteria(CHA),
      diabetes: true,
      congestive_heart_failure: true,
    });
  });

  it('does not read criteria into the score names or into phrases about risk', () => {
    // "HAS-BLED" is no bleeding history; "stroke risk" is no prior stroke.
    expect(parse('HAS-BLED bleeding risk for a 60 year old')).toEqual({
      calculator: 'has_bled',
      age: 60,
      ...noCriteria(HAS_BLED),
    });
    expect(parse('CHA2DS2-VASc stroke risk for a 60 year old woman')).toEqual({
      calculator: 'cha2ds2_vasc',
      age: 60,
      sex: 'female',
      ...noCriteria(CHA),
    });
  });

  it('HAS-BLED: controlled hypertension does not count, uncontrolled does', () => {
    expect(parse('HAS-BLED for a 70 year old with well-controlled hypertension')).toMatchObject({
      uncontrolled_hypertension: false,
    });
    expect(parse('HAS-BLED for a patient with uncontrolled hypertension')).toMatchObject({
      uncontrolled_hypertension: true,
    });
  });

  it('CURB-65 with BUN in mg/dL, and with labelled pressures', () => {
    expect(
      parse('CURB65: 80 yo, not confused, BUN 25 mg/dL, RR 24, systolic 100, diastolic 55'),
    ).toEqual({
      calculator: 'curb_65',
      confusion: false,
      bun: 25,
      respiratory_rate: 24,
      systolic: 100,
      diastolic: 55,
      age: 80,
    });
  });

  it('anion gap with potassium, and calcium and albumin in SI units (inferred when not written)', () => {
    expect(parse('anion gap: sodium 138, potassium 4.2, chloride 101, bicarbonate 18')).toEqual({
      calculator: 'anion_gap',
      sodium: 138,
      chloride: 101,
      bicarbonate: 18,
      potassium: 4.2,
    });
    expect(parse('adjusted calcium, calcium 2.05, albumin 28')).toEqual({
      calculator: 'corrected_calcium',
      calcium: 2.05,
      calcium_unit: 'mmol/L',
      albumin: 28,
      albumin_unit: 'g/L',
    });
  });

  it('Wells with several findings and an alternative diagnosis', () => {
    expect(
      parse(
        'Wells score for DVT: bedridden for 4 days, entire leg swollen, pitting oedema, alternative diagnosis at least as likely',
      ),
    ).toEqual({
      calculator: 'wells_dvt',
      ...noCriteria(WELLS),
      bedridden_or_recent_surgery: true,
      entire_leg_swollen: true,
      pitting_edema: true,
      alternative_diagnosis_likely: true,
    });
  });

  it('an incomplete score request is still returned: the tool then names what is missing', async () => {
    const args = parse('CHA2DS2-VASc for a patient with hypertension and diabetes');
    expect(args).toMatchObject({ calculator: 'cha2ds2_vasc', hypertension: true, diabetes: true });
    await expect(
      medicalCalculatorTool.run(args ?? {}, { userId: 'u', signal: new AbortController().signal }),
    ).rejects.toThrow('age is required');
  });
});

describe('parseCalculatorRequest: texts that are no calculation request', () => {
  it.each([
    'what is BMI?',
    'how is eGFR used in CKD staging?',
    'What is a normal anion gap?',
    'Explain the CHA2DS2-VASc score',
    'Is hypertension part of CHA2DS2-VASc?',
    'Does HAS-BLED count alcohol?',
    'What does a CURB-65 of 3 mean?',
    'When should I use the Wells DVT score?',
    'What is the BMI cut-off for obesity?',
    'BMI for 80 kg', // no height
    'eGFR for a 60 year old woman', // no creatinine
    'MAP target in septic shock',
    'Wells score for PE with tachycardia', // the PE score is not offered
    'BMI and BSA for 80 kg and 180 cm', // two calculators
    'Tell me about hypertension',
    '',
  ])('%s', (text) => {
    expect(parseCalculatorRequest(text)).toBeNull();
  });

  it('a very long text (a pasted document) is not read', () => {
    expect(parseCalculatorRequest(`BMI for 80 kg and 180 cm. ${'x'.repeat(2000)}`)).toBeNull();
  });
});
