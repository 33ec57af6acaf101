import { describe, expect, it } from 'vitest';
import { matchUnit, normaliseUnit, round } from './units.js';

describe('round', () => {
  it('rounds half away from zero, including values stored just below the half', () => {
    expect(round(24.65, 1)).toBe(24.7);
    expect(round(1.005, 2)).toBe(1.01);
    expect(round(2.5, 0)).toBe(3);
    expect(round(-1.5, 0)).toBe(-2);
    expect(round(93.333, 0)).toBe(93);
    expect(round(0, 2)).toBe(0);
    expect(Object.is(round(-0.01, 1), 0)).toBe(true);
  });
});

describe('units', () => {
  it('normalises case, spaces and micro signs', () => {
    expect(normaliseUnit(' µmol / L ')).toBe('umol/l');
    expect(normaliseUnit('μmol/L')).toBe('umol/l');
    expect(normaliseUnit('micromol/L')).toBe('umol/l');
  });

  it('matches aliases to the schema spelling, and nothing else', () => {
    expect(matchUnit('lbs', ['kg', 'lb'])).toBe('lb');
    expect(matchUnit('Kilograms', ['kg', 'lb'])).toBe('kg');
    expect(matchUnit('metres', ['cm', 'm', 'in'])).toBe('m');
    expect(matchUnit('MG/DL', ['mg/dL', 'umol/L'])).toBe('mg/dL');
    expect(matchUnit('mmol/L', ['mg/dL', 'umol/L'])).toBeUndefined();
    expect(matchUnit('', ['kg'])).toBeUndefined();
  });
});
