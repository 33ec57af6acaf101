import { describe, expect, it } from 'vitest';
import { refusal } from '../../../../../test/helpers/calculator.js';
import { calculate } from './calculators.js';

const bmi = (weight: number, weightUnit: string, height: number, heightUnit: string) =>
  calculate({
    calculator: 'bmi',
    weight,
    weight_unit: weightUnit,
    height,
    height_unit: heightUnit,
  });

describe('BMI (weight / height², WHO adult categories, WHO TRS 894, 2000)', () => {
  it('80 kg, 1.80 m: 80 / 3.24 = 24.691… → 24.7, normal weight', () => {
    const result = bmi(80, 'kg', 1.8, 'm');
    expect(result).toMatchObject({
      calculator: 'bmi',
      value: 24.7,
      unit: 'kg/m2',
      interpretation: 'normal weight',
      inputs: { weight_kg: 80, height_m: 1.8 },
    });
    expect(result.formula).toContain('height (m)^2');
    expect(result.reference).toContain('WHO');
  });

  it('the same patient in centimetres gives the same value', () => {
    expect(bmi(80, 'kg', 180, 'cm').value).toBe(24.7);
  });

  it('converts pounds and inches: 176 lb = 79.832 kg, 69 in = 1.7526 m → 25.990… → 26.0', () => {
    const result = bmi(176, 'lb', 69, 'in');
    expect(result.value).toBe(26);
    expect(result.interpretation).toBe('overweight');
    expect(result.inputs).toEqual({ weight_kg: 79.83, height_m: 1.753 });
  });

  it('reads the category from the rounded value at each WHO cut-off', () => {
    // Height 1 m makes BMI equal to the weight in kg.
    const cases: [number, string][] = [
      [18.44, 'underweight'],
      [18.46, 'normal weight'], // rounds to 18.5
      [24.94, 'normal weight'],
      [24.96, 'overweight'], // rounds to 25.0
      [29.96, 'obesity class I'],
      [35, 'obesity class II'],
      [39.9, 'obesity class II'],
      [40, 'obesity class III'],
    ];
    for (const [weight, category] of cases) {
      expect(bmi(weight, 'kg', 1, 'm').interpretation, String(weight)).toBe(category);
    }
  });

  it('accepts unit spellings in any case (KG, Pounds, Inches)', () => {
    expect(bmi(176, 'Pounds', 69, 'Inches').value).toBe(26);
    expect(bmi(80, 'KG', 180, 'CM').value).toBe(24.7);
  });
});

describe('BSA (Mosteller RD, N Engl J Med 1987;317:1098: √(height cm × weight kg / 3600))', () => {
  it('70 kg, 170 cm: √(11900 / 3600) = √3.3056 = 1.8181… → 1.82 m²', () => {
    const result = calculate({
      calculator: 'bsa',
      weight: 70,
      weight_unit: 'kg',
      height: 170,
      height_unit: 'cm',
    });
    expect(result).toMatchObject({
      value: 1.82,
      unit: 'm2',
      inputs: { weight_kg: 70, height_cm: 170 },
    });
    expect(result.reference).toContain('Mosteller');
  });

  it('80 kg, 180 cm: √(14400 / 3600) = √4 = 2.00 m² exactly', () => {
    const args = {
      calculator: 'bsa',
      weight: 80,
      weight_unit: 'kg',
      height: 180,
      height_unit: 'cm',
    };
    expect(calculate(args).value).toBe(2);
  });

  it('176 lb and 69 in: √(175.26 × 79.832 / 3600) = 1.9714… → 1.97 m²', () => {
    const args = {
      calculator: 'bsa',
      weight: 176,
      weight_unit: 'lb',
      height: 69,
      height_unit: 'in',
    };
    expect(calculate(args).value).toBe(1.97);
  });
});

describe('body measurements refused', () => {
  const base = { calculator: 'bmi', weight: 80, weight_unit: 'kg', height: 180, height_unit: 'cm' };

  it.each([
    ['height of 0', { height: 0 }, /height must be between 30 and 250 cm/],
    ['negative weight', { weight: -70 }, /weight must be between 1 and 400 kg/],
    ['weight of 500 kg', { weight: 500 }, /weight must be between/],
    ['a height of 1.80 given as cm', { height: 1.8 }, /height must be between/],
    ['a height in metres beyond 2.5 m', { height: 3, height_unit: 'm' }, /between 0.3 and 2.5 m/],
    ['a huge number', { weight: 1e308 }, /weight must be between/],
    ['the weight as a string', { weight: '80' }, /weight must be a number/],
    ['NaN', { weight: Number.NaN }, /weight must be a number/],
    ['Infinity', { height: Number.POSITIVE_INFINITY }, /height must be a number/],
    ['a missing height', { height: undefined }, /height is required/],
    ['a missing unit', { weight_unit: undefined }, /weight_unit is required \(one of: kg, lb\)/],
    ['an unknown unit', { weight_unit: 'stone' }, /weight_unit must be one of: kg, lb/],
    ['a unit that is no string', { height_unit: 2 }, /height_unit must be one of: cm, m, in/],
    ['an argument of another calculator', { sex: 'male' }, /"sex" does not apply to the bmi/],
    ['an unknown argument', { shoe_size: 44 }, /unknown argument "shoe_size"/],
  ])('%s', (_name, change, message) => {
    const text = refusal({ ...base, ...change });
    expect(text).toMatch(message);
    expect(text).not.toMatch(/infinity|nan|kg\/m2/i);
  });

  it('weights quoted in pounds when pounds were used', () => {
    expect(refusal({ ...base, weight: 1000, weight_unit: 'lb' })).toBe(
      'weight must be between 2.205 and 881.8 lb',
    );
  });

  it('an impossible pair: 400 kg at 100 cm (BMI 400) or 1 kg at 180 cm', () => {
    for (const change of [{ weight: 400, height: 100 }, { weight: 1 }]) {
      const text = refusal({ ...base, ...change });
      expect(text).toMatch(/implausible together/);
      expect(text).not.toMatch(/\d/);
    }
    expect(refusal({ ...base, calculator: 'bsa', weight: 400, height: 100 })).toMatch(
      /implausible together/,
    );
  });
});
