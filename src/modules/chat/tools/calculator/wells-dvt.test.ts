import { describe, expect, it } from 'vitest';
import { ToolError } from '../types.js';
import { calculate } from './calculators.js';

/*
 * Wells PS et al. N Engl J Med 2003;349:1227-35 (the Lancet 1997;350:1795-8 model plus previously
 * documented DVT): one point for each of nine features, −2 when an alternative diagnosis is at
 * least as likely. Two-level: ≥ 2 likely, < 2 unlikely. Three-level (1997): ≤ 0 low, 1-2 moderate,
 * ≥ 3 high.
 */
describe('Wells DVT score (Wells et al. Lancet 1997, NEJM 2003)', () => {
  const wells = (extra: Record<string, unknown>) =>
    calculate({ calculator: 'wells_dvt', ...extra });

  it('active cancer and calf swelling: 2, DVT likely, moderate', () => {
    const result = wells({ active_cancer: true, calf_swelling: true });
    expect(result).toMatchObject({
      value: 2,
      unit: 'points',
      min_points: -2,
      max_points: 9,
      interpretation: 'DVT likely; moderate pre-test probability on the three-level scale',
    });
    expect(result.criteria_counted).toHaveLength(2);
    expect(result.reference).toContain('Wells');
  });

  it('no criteria: 0, unlikely and low; one criterion: 1, unlikely but moderate', () => {
    expect(wells({}).interpretation).toBe(
      'DVT unlikely; low pre-test probability on the three-level scale',
    );
    expect(wells({ pitting_edema: true }).interpretation).toBe(
      'DVT unlikely; moderate pre-test probability on the three-level scale',
    );
  });

  it('alternative diagnosis subtracts 2: tenderness + alternative = −1; alone = −2 (the minimum)', () => {
    const result = wells({ localized_tenderness: true, alternative_diagnosis_likely: true });
    expect(result.value).toBe(-1);
    expect(result.criteria_counted).toContainEqual({
      criterion: 'alternative diagnosis at least as likely as DVT',
      points: -2,
    });
    expect(wells({ alternative_diagnosis_likely: true }).value).toBe(-2);
  });

  it('all nine features: 9; with an alternative diagnosis: 7 (still high)', () => {
    const all = {
      active_cancer: true,
      paralysis_or_recent_cast: true,
      bedridden_or_recent_surgery: true,
      localized_tenderness: true,
      entire_leg_swollen: true,
      calf_swelling: true,
      pitting_edema: true,
      collateral_superficial_veins: true,
      previous_dvt: true,
    };
    expect(wells(all).value).toBe(9);
    expect(wells({ ...all, alternative_diagnosis_likely: true })).toMatchObject({
      value: 7,
      interpretation: 'DVT likely; high pre-test probability on the three-level scale',
    });
  });

  it('refuses a criterion given as a string, and an age (the score takes none)', () => {
    expect(() => wells({ active_cancer: 'true' })).toThrow(
      new ToolError('active_cancer must be true or false (a JSON boolean, not a string)'),
    );
    expect(() => wells({ age: 50 })).toThrow(ToolError);
  });
});
