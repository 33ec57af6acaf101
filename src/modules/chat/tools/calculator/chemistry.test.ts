import { describe, expect, it } from 'vitest';
import { refusal } from '../../../../../test/helpers/calculator.js';
import { calculate } from './calculators.js';

describe('mean arterial pressure: MAP = DBP + (SBP − DBP) / 3, whole mmHg', () => {
  it('120/80: 80 + 40/3 = 93.33 → 93 mmHg, within the usual range', () => {
    const result = calculate({ calculator: 'map', systolic: 120, diastolic: 80 });
    expect(result).toMatchObject({
      value: 93,
      unit: 'mmHg',
      interpretation: 'within the usual adult range',
      inputs: { systolic_mmhg: 120, diastolic_mmhg: 80 },
    });
  });

  it('85/50: 50 + 35/3 = 61.67 → 62 mmHg, below the 65 mmHg perfusion target', () => {
    const result = calculate({ calculator: 'map', systolic: 85, diastolic: 50 });
    expect(result.value).toBe(62);
    expect(result.interpretation).toMatch(/^low/);
  });

  it('180/110: 110 + 70/3 = 133.33 → 133 mmHg, high', () => {
    expect(calculate({ calculator: 'map', systolic: 180, diastolic: 110 })).toMatchObject({
      value: 133,
      interpretation: 'high',
    });
  });

  it.each([
    [
      'systolic below diastolic',
      { systolic: 80, diastolic: 120 },
      /systolic must be higher than diastolic/,
    ],
    ['systolic equal to diastolic', { systolic: 90, diastolic: 90 }, /systolic must be higher/],
    ['a systolic of 0', { systolic: 0, diastolic: 0 }, /systolic must be between 40 and 300 mmHg/],
    [
      'a diastolic of 250',
      { systolic: 290, diastolic: 250 },
      /diastolic must be between 20 and 200/,
    ],
    ['a reading as a string', { systolic: '120/80', diastolic: 80 }, /systolic must be a number/],
  ])('refuses %s', (_name, change, message) => {
    const text = refusal({ calculator: 'map', ...change });
    expect(text).toMatch(message);
    expect(text).not.toMatch(/107|93/); // the would-be MAPs of 80/120 and 120/80
  });
});

/* Emmett M, Narins RG. Medicine 1977;56:38-54: AG = Na − (Cl + HCO3), 12 ± 4 mmol/L. */
describe('anion gap (Emmett & Narins 1977)', () => {
  const gap = (extra: Record<string, unknown>) =>
    calculate({ calculator: 'anion_gap', sodium: 140, chloride: 100, bicarbonate: 24, ...extra });

  it('Na 140, Cl 100, HCO3 24: 140 − 124 = 16 mmol/L, at the top of 8-16', () => {
    expect(gap({})).toMatchObject({
      value: 16,
      unit: 'mmol/L',
      interpretation: 'within the traditional reference interval',
      formula: 'AG = Na - (Cl + HCO3)',
      inputs: { potassium_mmol_l: null },
    });
  });

  it('with potassium 4.5: (140 + 4.5) − 124 = 20.5 mmol/L, above 12-20', () => {
    expect(gap({ potassium: 4.5 })).toMatchObject({
      value: 20.5,
      interpretation: 'raised (high anion gap)',
      formula: 'AG = (Na + K) - (Cl + HCO3)',
    });
  });

  it('Na 138, Cl 98, HCO3 12: 28 mmol/L, raised; Na 140, Cl 110, HCO3 25: 5, below', () => {
    expect(gap({ sodium: 138, chloride: 98, bicarbonate: 12 }).interpretation).toMatch(/raised/);
    expect(gap({ chloride: 110, bicarbonate: 25 })).toMatchObject({
      value: 5,
      interpretation: 'below the traditional reference interval',
    });
  });

  it('potassium: null counts as not given', () => {
    expect(gap({ potassium: null }).value).toBe(16);
  });

  it.each([
    [
      'sodium of 14 (a dropped digit)',
      { sodium: 14 },
      /sodium must be between 100 and 200 mmol\/L/,
    ],
    ['bicarbonate of 0', { bicarbonate: 0 }, /bicarbonate must be between 1 and 60/],
    ['potassium of 45', { potassium: 45 }, /potassium must be between 1 and 10/],
    ['a missing chloride', { chloride: undefined }, /chloride is required/],
    [
      'an impossible set (gap of 100)',
      { sodium: 200, chloride: 50, bicarbonate: 50 },
      /implausible together/,
    ],
  ])('refuses %s', (_name, change, message) => {
    const text = refusal({
      calculator: 'anion_gap',
      sodium: 140,
      chloride: 100,
      bicarbonate: 24,
      ...change,
    });
    expect(text).toMatch(message);
    expect(text).not.toMatch(/gap of|= ?\d/);
  });
});

/*
 * Payne RB et al. BMJ 1973;4:643-6 introduced adjusting calcium for albumin; the form in clinical
 * use is corrected Ca = Ca + 0.8 × (4.0 − albumin g/dL) in mg/dL, or Ca + 0.02 × (40 − albumin g/L)
 * in mmol/L (the paper itself printed Ca − albumin + 4.0, slope 1, in mg/100 mL and g/100 mL).
 */
describe('albumin-corrected calcium (Payne et al. BMJ 1973, clinical 0.8 / 0.02 form)', () => {
  it('8.0 mg/dL with albumin 2.5 g/dL: 8.0 + 0.8 × 1.5 = 9.2 mg/dL (9.2 / 4.008 = 2.30 mmol/L)', () => {
    const result = calculate({
      calculator: 'corrected_calcium',
      calcium: 8,
      calcium_unit: 'mg/dL',
      albumin: 2.5,
      albumin_unit: 'g/dL',
    });
    expect(result).toMatchObject({
      value: 9.2,
      unit: 'mg/dL',
      interpretation: 'within the usual reference range',
      alternative: { value: 2.3, unit: 'mmol/L' },
      inputs: { calcium_mmol_l: 1.996, albumin_g_l: 25 },
    });
    expect(result.reference).toContain('Payne');
  });

  it('2.00 mmol/L with albumin 25 g/L: 2.00 + 0.02 × 15 = 2.30 mmol/L (× 4.008 = 9.2 mg/dL)', () => {
    const result = calculate({
      calculator: 'corrected_calcium',
      calcium: 2,
      calcium_unit: 'mmol/L',
      albumin: 25,
      albumin_unit: 'g/L',
    });
    expect(result).toMatchObject({
      value: 2.3,
      unit: 'mmol/L',
      alternative: { value: 9.2, unit: 'mg/dL' },
    });
  });

  it('mixed units: 8.0 mg/dL with 25 g/L equals 8.0 mg/dL with 2.5 g/dL', () => {
    const result = calculate({
      calculator: 'corrected_calcium',
      calcium: 8,
      calcium_unit: 'mg/dL',
      albumin: 25,
      albumin_unit: 'g/L',
    });
    expect(result.value).toBe(9.2);
  });

  it('1.80 mmol/L with albumin 30 g/L: 1.80 + 0.2 = 2.00, low; 2.60 with 20 g/L: 3.00, high', () => {
    const corrected = (calcium: number, albumin: number) =>
      calculate({
        calculator: 'corrected_calcium',
        calcium,
        calcium_unit: 'mmol/L',
        albumin,
        albumin_unit: 'g/L',
      });
    expect(corrected(1.8, 30)).toMatchObject({ value: 2, interpretation: 'low (hypocalcaemia)' });
    expect(corrected(2.6, 20)).toMatchObject({ value: 3, interpretation: 'high (hypercalcaemia)' });
  });

  it.each([
    ['calcium of 0', { calcium: 0 }, /calcium must be between 4.008 and 20.04 mg\/dL/],
    ['calcium in mmol/L written as mg/dL', { calcium: 2.2 }, /calcium must be between/],
    ['albumin in g/L written as g/dL', { albumin: 25 }, /albumin must be between 0.5 and 7 g\/dL/],
    [
      'a missing albumin unit',
      { albumin_unit: undefined },
      /albumin_unit is required \(one of: g\/L, g\/dL\)/,
    ],
  ])('refuses %s', (_name, change, message) => {
    const text = refusal({
      calculator: 'corrected_calcium',
      calcium: 8,
      calcium_unit: 'mg/dL',
      albumin: 2.5,
      albumin_unit: 'g/dL',
      ...change,
    });
    expect(text).toMatch(message);
    expect(text).not.toContain('9.2');
  });
});
