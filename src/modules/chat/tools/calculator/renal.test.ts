import { describe, expect, it } from 'vitest';
import { refusal } from '../../../../../test/helpers/calculator.js';
import { calculate } from './calculators.js';
import { ckdEpi2021 } from './renal.js';

const egfr = (age: number, sex: string, creatinine: number, unit = 'mg/dL') =>
  calculate({ calculator: 'egfr', age, sex, creatinine, creatinine_unit: unit });

/*
 * CKD-EPI 2021 (Inker LA et al. N Engl J Med 2021;385:1737-49), creatinine in mg/dL:
 * eGFR = 142 × min(Scr/κ, 1)^α × max(Scr/κ, 1)^−1.200 × 0.9938^age × 1.012 [female],
 * κ = 0.7 (F) / 0.9 (M), α = −0.241 (F) / −0.302 (M). Reported as whole numbers (KDIGO).
 */
describe('eGFR, CKD-EPI 2021 race-free creatinine equation (Inker et al. NEJM 2021)', () => {
  it('woman, 60, creatinine 1.2 mg/dL: 142 × 1.714^−1.2 (0.52372) × 0.9938^60 (0.68856) × 1.012 = 51.82 → 52, G3a', () => {
    const result = egfr(60, 'female', 1.2);
    expect(result).toMatchObject({
      calculator: 'egfr',
      value: 52,
      unit: 'mL/min/1.73m2',
      interpretation: 'GFR category G3a, mildly to moderately decreased',
      inputs: { age_years: 60, sex: 'female', creatinine_mg_dl: 1.2, creatinine_umol_l: 106.1 },
    });
    expect(result.reference).toContain('Inker');
    expect(ckdEpi2021(1.2, 60, true)).toBeCloseTo(51.82, 2);
  });

  it('woman, 40, creatinine at κ (0.7 mg/dL): both ratio terms are 1 → 142 × 0.9938^40 (0.77976) × 1.012 = 112.05 → 112, G1', () => {
    expect(ckdEpi2021(0.7, 40, true)).toBeCloseTo(112.05, 2);
    expect(egfr(40, 'female', 0.7)).toMatchObject({
      value: 112,
      interpretation: 'GFR category G1, normal or high',
    });
  });

  it('woman, 30, creatinine 0.5 mg/dL (below κ): 142 × (0.5/0.7)^−0.241 (1.08447) × 0.9938^30 (0.82979) × 1.012 = 129.32 → 129', () => {
    expect(egfr(30, 'female', 0.5).value).toBe(129);
  });

  it('man, 50, creatinine 0.6 mg/dL: 142 × (0.6/0.9)^−0.302 (1.13026) × 0.9938^50 (0.73274) = 117.60 → 118', () => {
    expect(egfr(50, 'male', 0.6).value).toBe(118);
  });

  it('man, 45, creatinine 110 µmol/L = 1.2443 mg/dL: 142 × 1.3826^−1.2 (0.67790) × 0.9938^45 (0.75588) = 72.76 → 73, G2', () => {
    expect(egfr(45, 'male', 110, 'umol/L')).toMatchObject({
      value: 73,
      interpretation: 'GFR category G2, mildly decreased',
      inputs: { creatinine_mg_dl: 1.24, creatinine_umol_l: 110 },
    });
  });

  it('man, 70, creatinine 3.0 mg/dL: 142 × 3.3333^−1.2 (0.23580) × 0.9938^70 (0.64704) = 21.67 → 22, G4', () => {
    expect(egfr(70, 'male', 3)).toMatchObject({
      value: 22,
      interpretation: 'GFR category G4, severely decreased',
    });
  });

  it('88.4 µmol/L is exactly 1 mg/dL (man, 60: 86.16 → 86), µmol/L spelt µ, μ or micromol', () => {
    expect(egfr(60, 'male', 1).value).toBe(86);
    for (const unit of ['umol/L', 'µmol/L', 'μmol/l', 'micromol/L']) {
      expect(egfr(60, 'male', 88.4, unit).value, unit).toBe(86);
    }
  });

  it('the female factor alone: same inputs, woman vs man differ (κ, α and 1.012)', () => {
    expect(egfr(60, 'female', 1).value).not.toBe(egfr(60, 'male', 1).value);
  });

  it('KDIGO bands on the rounded value: G5 below 15', () => {
    expect(egfr(80, 'male', 6).interpretation).toBe('GFR category G5, kidney failure range');
  });
});

/* Cockcroft DW, Gault MH. Nephron 1976;16:31-41: CrCl = (140 − age) × kg / (72 × Scr mg/dL), × 0.85 female. */
describe('creatinine clearance, Cockcroft-Gault (Nephron 1976)', () => {
  const cg = (age: number, sex: string, weight: number, creatinine: number, unit = 'mg/dL') =>
    calculate({
      calculator: 'cockcroft_gault',
      age,
      sex,
      weight,
      weight_unit: 'kg',
      creatinine,
      creatinine_unit: unit,
    });

  it('man, 70, 72 kg, 1.0 mg/dL: 70 × 72 / 72 = 70 mL/min', () => {
    const result = cg(70, 'male', 72, 1);
    expect(result).toMatchObject({ value: 70, unit: 'mL/min', interpretation: 'mildly reduced' });
    expect(result.reference).toContain('Cockcroft');
  });

  it('woman, 80, 60 kg, 1.5 mg/dL: 60 × 60 / 108 × 0.85 = 28.33 → 28 mL/min', () => {
    expect(cg(80, 'female', 60, 1.5)).toMatchObject({
      value: 28,
      interpretation: 'severely reduced',
    });
  });

  it('man, 40, 80 kg, 110 µmol/L (1.2443 mg/dL): 100 × 80 / 89.59 = 89.29 → 89 mL/min', () => {
    expect(cg(40, 'male', 80, 110, 'umol/L').value).toBe(89);
  });

  it('converts pounds: 158.73 lb = 72 kg gives the same 70 mL/min', () => {
    const args = {
      calculator: 'cockcroft_gault',
      age: 70,
      sex: 'male',
      weight: 72 / 0.45359237,
      weight_unit: 'lb',
      creatinine: 88.4,
      creatinine_unit: 'umol/L',
    };
    expect(calculate(args).value).toBe(70);
  });
});

describe('kidney inputs refused', () => {
  const base = {
    calculator: 'egfr',
    age: 60,
    sex: 'female',
    creatinine: 1.2,
    creatinine_unit: 'mg/dL',
  };

  it.each([
    ['an age of 300', { age: 300 }, 'age must be between 18 and 120 years'],
    ['a child (CKD-EPI is for adults)', { age: 10 }, 'age must be between 18 and 120 years'],
    ['creatinine 0', { creatinine: 0 }, 'creatinine must be between 0.1 and 25 mg/dL'],
    ['negative creatinine', { creatinine: -1 }, 'creatinine must be between 0.1 and 25 mg/dL'],
    [
      'µmol/L read as mg/dL (110 mg/dL)',
      { creatinine: 110 },
      'creatinine must be between 0.1 and 25 mg/dL',
    ],
    [
      'mg/dL read as µmol/L (1.2 µmol/L)',
      { creatinine_unit: 'umol/L' },
      'creatinine must be between 8.84 and 2210 umol/L',
    ],
    ['a sex not in the equation', { sex: 'unknown' }, 'sex must be "female" or "male"'],
    ['sex as a boolean', { sex: true }, 'sex must be "female" or "male"'],
    ['no sex', { sex: null }, 'sex is required (female or male)'],
    ['the age as a string', { age: '60' }, 'age must be a number (a JSON number, not a string)'],
    [
      'a weight (not used by eGFR)',
      { weight: 70, weight_unit: 'kg' },
      'argument "weight" does not apply to the egfr calculator; it takes: age, sex, creatinine, creatinine_unit',
    ],
  ])('%s', (_name, change, message) => {
    const text = refusal({ ...base, ...change });
    expect(text).toBe(message);
    expect(text).not.toContain('52');
  });

  it('Cockcroft-Gault needs the weight', () => {
    expect(refusal({ ...base, calculator: 'cockcroft_gault' })).toBe('weight is required');
  });
});
