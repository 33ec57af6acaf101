import { describe, expect, it } from 'vitest';
import { isSpecialist } from '../llm/extractive-text.js';
import { isGeneralWord } from './general-english.js';

describe('everyday English and the words of the field', () => {
  it('knows the words of everyday speech, in any case', () => {
    for (const word of ['tangled', 'skunk', 'Classroom', 'chewing', 'workup', 'anemic']) {
      expect(isGeneralWord(word)).toBe(true);
    }
    for (const word of ['spiramycin', 'ferritin', 'titer', 'varicella', 'Coumadin']) {
      expect(isGeneralWord(word)).toBe(false);
    }
  });

  it('calls a written word specialist when a plain part of it is not everyday English', () => {
    expect(isSpecialist('spiramycin')).toBe(true);
    expect(isSpecialist('Imitrex')).toBe(true);
    expect(isSpecialist('enteric-coated')).toBe(true);
    expect(isSpecialist('half-life')).toBe(false);
    expect(isSpecialist('kitty')).toBe(false);
  });

  it('leaves abbreviations and short words to the abbreviation rules', () => {
    for (const written of ['IVIG', 'tTG-IgA', 'DDAVP', 'GF', 'pts', 'hCG']) {
      expect(isSpecialist(written)).toBe(false);
    }
  });
});
