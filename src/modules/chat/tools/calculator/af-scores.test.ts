import { describe, expect, it } from 'vitest';
import { refusal } from '../../../../../test/helpers/calculator.js';
import { calculate } from './calculators.js';

/*
 * Lip GYH et al. Chest 2010;137:263-72: C (heart failure) 1, H (hypertension) 1, A2 (age ≥ 75) 2,
 * D (diabetes) 1, S2 (stroke/TIA/thromboembolism) 2, V (vascular disease) 1, A (65-74) 1,
 * Sc (female) 1; maximum 9.
 */
describe('CHA2DS2-VASc (Lip et al. Chest 2010)', () => {
  const cha = (extra: Record<string, unknown>) =>
    calculate({ calculator: 'cha2ds2_vasc', ...extra });

  it('woman, 76, hypertension: A2 2 + Sc 1 + H 1 = 4, high risk', () => {
    const result = cha({ age: 76, sex: 'female', hypertension: true });
    expect(result).toMatchObject({
      value: 4,
      unit: 'points',
      min_points: 0,
      max_points: 9,
      interpretation: 'high stroke risk: oral anticoagulation is recommended',
      criteria_counted: [
        { criterion: 'hypertension', points: 1 },
        { criterion: 'age 75 or over', points: 2 },
        { criterion: 'female sex', points: 1 },
      ],
      inputs: {
        age_years: 76,
        sex: 'female',
        hypertension: true,
        diabetes: false,
        age_65_to_74: false,
      },
    });
    expect(result.reference).toContain('Lip');
  });

  it('man, 50, nothing else: 0, low; woman, 50, nothing else: 1 (sex alone), still low', () => {
    expect(cha({ age: 50, sex: 'male' })).toMatchObject({ value: 0, criteria_counted: [] });
    const woman = cha({ age: 50, sex: 'female' });
    expect(woman.value).toBe(1);
    expect(woman.interpretation).toMatch(/^low/);
  });

  it('age bands: 64 → 0, 65 → 1, 74 → 1, 75 → 2 (man, no other criteria)', () => {
    const points = [64, 65, 74, 75].map((age) => cha({ age, sex: 'male' }).value);
    expect(points).toEqual([0, 1, 1, 2]);
  });

  it('man, 70, diabetes: 2 (A 1 + D 1), high; man, 60, diabetes: 1, intermediate', () => {
    expect(cha({ age: 70, sex: 'male', diabetes: true }).interpretation).toMatch(/^high/);
    expect(cha({ age: 60, sex: 'male', diabetes: true })).toMatchObject({
      value: 1,
      interpretation: 'intermediate stroke risk: consider oral anticoagulation',
    });
  });

  it('woman, 60, diabetes: 2 but intermediate (the sex point is a risk modifier only)', () => {
    expect(cha({ age: 60, sex: 'female', diabetes: true })).toMatchObject({
      value: 2,
      interpretation: 'intermediate stroke risk: consider oral anticoagulation',
    });
  });

  it('every criterion: woman, 80, all present = 1+1+2+1+2+1+1 = 9, the maximum', () => {
    const result = cha({
      age: 80,
      sex: 'female',
      congestive_heart_failure: true,
      hypertension: true,
      diabetes: true,
      stroke_tia_thromboembolism: true,
      vascular_disease: true,
    });
    expect(result.value).toBe(9);
    expect(result.criteria_counted).toHaveLength(7);
  });

  it('prior stroke alone in a man of 50 counts 2', () => {
    expect(cha({ age: 50, sex: 'male', stroke_tia_thromboembolism: true }).value).toBe(2);
  });

  it.each([
    [
      'a boolean given as a string',
      { hypertension: 'true' },
      'hypertension must be true or false (a JSON boolean, not a string)',
    ],
    [
      'a boolean given as 1',
      { diabetes: 1 },
      'diabetes must be true or false (a JSON boolean, not a string)',
    ],
    ['no age', { age: undefined }, 'age is required'],
    ['an age of 300', { age: 300 }, 'age must be between 18 and 120 years'],
    ['no sex', { sex: undefined }, 'sex is required (female or male)'],
    [
      'a HAS-BLED criterion',
      { labile_inr: true },
      'argument "labile_inr" does not apply to the cha2ds2_vasc calculator; it takes: age, sex, congestive_heart_failure, hypertension, diabetes, stroke_tia_thromboembolism, vascular_disease',
    ],
  ])('refuses %s', (_name, change, message) => {
    expect(refusal({ calculator: 'cha2ds2_vasc', age: 76, sex: 'female', ...change })).toBe(
      message,
    );
  });
});

/*
 * Pisters R et al. Chest 2010;138:1093-100: one point each for uncontrolled hypertension, abnormal
 * renal function, abnormal liver function, stroke, bleeding, labile INR, elderly (> 65), drugs
 * (antiplatelets/NSAIDs), alcohol; maximum 9; ≥ 3 high risk.
 */
describe('HAS-BLED (Pisters et al. Chest 2010)', () => {
  const hasBled = (extra: Record<string, unknown>) =>
    calculate({ calculator: 'has_bled', ...extra });

  it('72, aspirin, labile INR, prior stroke: S + L + E + D = 4, high risk', () => {
    const result = hasBled({
      age: 72,
      antiplatelet_or_nsaid: true,
      labile_inr: true,
      prior_stroke: true,
    });
    expect(result).toMatchObject({ value: 4, min_points: 0, max_points: 9 });
    expect(result.interpretation).toMatch(/^high bleeding risk/);
    expect(result.criteria_counted?.map((c) => c.criterion)).toEqual([
      'prior stroke',
      'labile INR',
      'elderly (age > 65)',
      'antiplatelet or NSAID use',
    ]);
    expect(result.reference).toContain('Pisters');
  });

  it('elderly means older than 65: 65 → 0, 66 → 1', () => {
    expect(hasBled({ age: 65 }).value).toBe(0);
    expect(hasBled({ age: 66 }).value).toBe(1);
  });

  it('bands: 0 low, 2 moderate, 3 high', () => {
    expect(hasBled({ age: 50 }).interpretation).toBe('low bleeding risk');
    expect(hasBled({ age: 70, alcohol_excess: true }).interpretation).toBe(
      'moderate bleeding risk',
    );
    expect(hasBled({ age: 70, alcohol_excess: true, bleeding_history: true }).value).toBe(3);
  });

  it('all nine criteria: 9', () => {
    const all = {
      age: 80,
      uncontrolled_hypertension: true,
      abnormal_renal_function: true,
      abnormal_liver_function: true,
      prior_stroke: true,
      bleeding_history: true,
      labile_inr: true,
      antiplatelet_or_nsaid: true,
      alcohol_excess: true,
    };
    expect(hasBled(all).value).toBe(9);
  });

  it('without an age the elderly criterion counts absent, and says so', () => {
    const result = hasBled({ abnormal_renal_function: true });
    expect(result.value).toBe(1);
    expect(result.inputs).toMatchObject({ age_years: null, elderly: false });
    expect(result.notes).toEqual([expect.stringContaining('Age was not given')]);
  });

  it.each([
    ['a string flag', { alcohol_excess: 'yes' }, /alcohol_excess must be true or false/],
    ['an age of 0', { age: 0 }, /age must be between 18 and 120 years/],
    ['an elderly flag (age is what it takes)', { elderly: true }, /unknown argument "elderly"/],
  ])('refuses %s', (_name, change, message) => {
    expect(refusal({ calculator: 'has_bled', ...change })).toMatch(message);
  });
});
