import { describe, expect, it } from 'vitest';
import { refusal } from '../../../../../test/helpers/calculator.js';
import { calculate } from './calculators.js';

/*
 * Lim WS et al. Thorax 2003;58:377-82: one point each for Confusion, Urea > 7 mmol/L, Respiratory
 * rate ≥ 30/min, Blood pressure (systolic < 90 or diastolic ≤ 60 mmHg), age ≥ 65; 0-1 low,
 * 2 moderate, 3-5 high severity. BUN > 19 mg/dL corresponds to urea > 7 mmol/L (÷ 2.8014).
 */
describe('CURB-65 (Lim et al. Thorax 2003)', () => {
  const healthy = { urea: 5, respiratory_rate: 16, systolic: 120, diastolic: 80, age: 40 };
  const curb = (extra: Record<string, unknown>) =>
    calculate({ calculator: 'curb_65', ...healthy, ...extra });

  it('70, confused, urea 8, RR 32, BP 85/50: all five criteria = 5', () => {
    const result = curb({
      confusion: true,
      urea: 8,
      respiratory_rate: 32,
      systolic: 85,
      diastolic: 50,
      age: 70,
    });
    expect(result).toMatchObject({ value: 5, min_points: 0, max_points: 5 });
    expect(result.criteria_counted).toHaveLength(5);
    expect(result.interpretation).toMatch(/assess for intensive care/);
    expect(result.reference).toContain('Lim');
  });

  it('none met: 0, low severity', () => {
    expect(curb({})).toMatchObject({
      value: 0,
      interpretation: 'low severity: consider treatment at home',
    });
  });

  it('thresholds are strict where the paper says so: urea 7.0 and RR 29 do not count, urea 7.1 and RR 30 do', () => {
    expect(curb({ urea: 7 }).value).toBe(0);
    expect(curb({ urea: 7.1 }).value).toBe(1);
    expect(curb({ respiratory_rate: 29 }).value).toBe(0);
    expect(curb({ respiratory_rate: 30 }).value).toBe(1);
  });

  it('blood pressure: systolic 89 or diastolic 60 counts, 90/61 does not', () => {
    expect(curb({ systolic: 89, diastolic: 70 }).value).toBe(1);
    expect(curb({ systolic: 120, diastolic: 60 }).value).toBe(1);
    expect(curb({ systolic: 90, diastolic: 61 }).value).toBe(0);
  });

  it('age 64 → 0, 65 → 1; 2 is moderate, 3 high', () => {
    expect(curb({ age: 64 }).value).toBe(0);
    expect(curb({ age: 65 }).value).toBe(1);
    expect(curb({ age: 65, confusion: true }).interpretation).toMatch(/^moderate/);
    expect(curb({ age: 65, confusion: true, urea: 9 }).interpretation).toBe(
      'high severity: manage in hospital as severe pneumonia',
    );
  });

  it('BUN in mg/dL: 20 mg/dL = 7.14 mmol/L counts, 19 mg/dL = 6.78 mmol/L does not', () => {
    const withBun = (bun: number) =>
      calculate({ calculator: 'curb_65', ...healthy, urea: undefined, bun });
    expect(withBun(20)).toMatchObject({ value: 1, inputs: { urea_mmol_l: 7.14 } });
    expect(withBun(19)).toMatchObject({ value: 0, inputs: { urea_mmol_l: 6.78 } });
  });

  it.each([
    ['urea and BUN together', { bun: 20 }, 'give urea (mmol/L) or bun (mg/dL), not both'],
    ['neither urea nor BUN', { urea: null }, 'urea (mmol/L) or bun (mg/dL) is required'],
    [
      'confusion as a string',
      { confusion: 'yes' },
      'confusion must be true or false (a JSON boolean, not a string)',
    ],
    [
      'a systolic below the diastolic',
      { systolic: 50, diastolic: 85 },
      'systolic must be higher than diastolic: check the blood pressure reading',
    ],
    [
      'a respiratory rate of 0',
      { respiratory_rate: 0 },
      'respiratory_rate must be between 4 and 80 breaths/min',
    ],
    ['an age of 300', { age: 300 }, 'age must be between 18 and 120 years'],
  ])('refuses %s', (_name, change, message) => {
    expect(refusal({ calculator: 'curb_65', ...healthy, ...change })).toBe(message);
  });
});
