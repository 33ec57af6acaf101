import { describe, expect, it } from 'vitest';
import { CLINICAL_NAMES, WORDS } from './clinical-names.js';

const entries = WORDS.split(/\s+/).filter((w) => w !== '');

describe('CLINICAL_NAMES', () => {
  it('holds lowercase single words only', () => {
    for (const word of CLINICAL_NAMES) expect(word).toMatch(/^[a-z]+$/);
  });

  it('holds more than 800 names', () => {
    expect(CLINICAL_NAMES.size).toBeGreaterThan(800);
  });

  it('lists no word twice', () => {
    const repeated = entries.filter((w, i) => entries.indexOf(w) !== i);
    expect(repeated).toEqual([]);
    expect(CLINICAL_NAMES.size).toBe(entries.length);
  });

  it('names clinical topics whose spelling does not look clinical', () => {
    for (const word of ['measles', 'lithium', 'glaucoma', 'methotrexate', 'scabies']) {
      expect(CLINICAL_NAMES.has(word), word).toBe(true);
    }
  });

  it('leaves out ordinary words, drug classes and general terms', () => {
    const ordinary = [
      'pain',
      'cough',
      'cold',
      'fever',
      'heart',
      'blood',
      'tablet',
      'jab',
      'injection',
      'vaccine',
      'flu',
      'cancer',
      'stroke',
      'anxiety',
      'depression',
      'antibiotics',
      'statins',
      'inhaler',
      'oxygen',
      'iron',
      'calcium',
      'pregnancy',
    ];
    for (const word of ordinary) expect(CLINICAL_NAMES.has(word), word).toBe(false);
  });

  it('leaves out acronyms', () => {
    for (const word of ['copd', 'ecg', 'mri', 'uti', 'dvt', 'hiv', 'hpv', 'bcg', 'nsaid']) {
      expect(CLINICAL_NAMES.has(word), word).toBe(false);
    }
  });
});
