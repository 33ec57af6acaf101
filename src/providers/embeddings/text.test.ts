import { describe, expect, it } from 'vitest';
import { LAY_TERMS } from './lexicon-lay.js';
import { PHRASING } from './lexicon-phrasing.js';
import { SYNONYMS } from './lexicon.js';
import { analyse, expansions, fold, stem, tokenize } from './text.js';

describe('text analysis', () => {
  it('folds case, accents and ligatures', () => {
    expect(fold('Œdème Aigu')).toBe('oedeme aigu');
    expect(fold('Anaemia')).toBe('anaemia');
  });

  it('keeps drug-class names with a number in one word', () => {
    expect(tokenize('SGLT-2 inhibitors and GLP-1 agonists')).toEqual([
      'sglt2',
      'inhibitors',
      'and',
      'glp1',
      'agonists',
    ]);
  });

  it('stems word forms to one stem and leaves short words alone', () => {
    expect(stem('hypertensive')).toBe(stem('hypertension'));
    expect(stem('anticoagulant')).toBe(stem('anticoagulation'));
    expect(stem('infected')).toBe(stem('infection'));
    expect(stem('renal')).toBe('renal');
    expect(stem('t2dm')).toBe('t2dm');
  });

  it('adds lexicon expansions, longest phrase first, as separate segments', () => {
    expect(expansions(tokenize('high blood pressure after a heart attack'))).toEqual([
      ['hypertension'],
      ['myocardial', 'infarction'],
    ]);
    expect(expansions(tokenize('on a water pill'))).toEqual([['diuretic']]);
  });

  it('drops stopwords from every segment', () => {
    expect(analyse('What is the dose of the blood thinner?')).toEqual([
      ['dose', 'blood', 'thinner'],
      ['dosing'],
      ['anticoagulant'],
    ]);
  });

  it('expands everyday words for clinical concepts', () => {
    expect(expansions(tokenize('a jab for pensioners'))).toEqual([
      ['injection', 'vaccination'],
      ['older', 'people', 'aged', '65'],
    ]);
    expect(expansions(tokenize('a finger-prick reading'))).toEqual([['capillary', 'glucose']]);
    expect(expansions(tokenize('lost a kilo after rehab'))).toEqual([['kg'], ['rehabilitation']]);
    expect(expansions(tokenize('on a water tablet and a blood thinner'))).toEqual([
      ['diuretic'],
      ['oral'],
      ['anticoagulant'],
    ]);
  });

  it('expands everyday phrasing into the words guidelines use', () => {
    expect(expansions(tokenize('does it raise the chance of a fall'))).toEqual([
      ['increase'],
      ['risk'],
    ]);
    expect(expansions(tokenize('can the two be taken together'))).toEqual([
      ['combine', 'combination'],
    ]);
    expect(expansions(tokenize('should it be done again'))).toEqual([['repeat']]);
  });

  it('writes every lexicon key as the tokens it is matched against', () => {
    expect(Object.keys(LAY_TERMS).length).toBeGreaterThanOrEqual(100);
    expect(Object.keys(SYNONYMS)).toEqual(expect.arrayContaining(Object.keys(PHRASING)));
    for (const [key, value] of Object.entries(SYNONYMS)) {
      expect(tokenize(key).join(' ')).toBe(key);
      expect(tokenize(value).join(' ')).toBe(value);
    }
  });
});
