import { describe, expect, it } from 'vitest';
import { definitionsIn, DocumentDefinitions } from './definitions.js';

describe('definitionsIn: the abbreviations a text defines (Schwartz and Hearst)', () => {
  it('finds a short form after its long form, the long form cut at its first word', () => {
    expect(
      definitionsIn('It does not tell whether the person has latent TB infection (LTBI) or not.'),
    ).toEqual([{ short: 'LTBI', long: 'latent TB infection', kind: 'abbreviation' }]);
    expect(definitionsIn('Dose by creatinine clearance (CrCl) below 30 mL/min.')).toEqual([
      { short: 'CrCl', long: 'creatinine clearance', kind: 'abbreviation' },
    ]);
    expect(definitionsIn('End stage renal disease (ESRD): at most 30 mg.')).toEqual([
      { short: 'ESRD', long: 'End stage renal disease', kind: 'abbreviation' },
    ]);
  });

  it('prefers the words whose initials spell it to the shortest run holding its letters', () => {
    // "test" alone holds t, s and t in order.
    expect(definitionsIn('Give the tuberculin skin test (TST) first.')).toEqual([
      { short: 'TST', long: 'tuberculin skin test', kind: 'abbreviation' },
    ]);
    expect(definitionsIn('Approved by the Food and Drug Administration (FDA).')).toEqual([
      { short: 'FDA', long: 'Food and Drug Administration', kind: 'abbreviation' },
    ]);
  });

  it('finds a long form in parentheses after its short form', () => {
    expect(definitionsIn('Treat HGA (human granulocytic anaplasmosis) promptly.')).toEqual([
      { short: 'HGA', long: 'human granulocytic anaplasmosis', kind: 'abbreviation' },
    ]);
  });

  it('takes no synonym, aside or reference for a definition', () => {
    expect(definitionsIn('Fatigue (tiredness) is common.')).toEqual([]);
    expect(definitionsIn('Chest radiograph (X-ray) findings.')).toEqual([]);
    expect(definitionsIn('Adjust the dose (2.6, 7.1) as needed (see below).')).toEqual([]);
    expect(definitionsIn('The heart (HT) is a muscle.')).toEqual([]);
  });

  it('keeps the first long form of a short form defined twice', () => {
    const text =
      'Von Willebrand disease (VWD) is inherited. Treating von Willebrand disease (VWD).';
    expect(definitionsIn(text)).toEqual([
      { short: 'VWD', long: 'Von Willebrand disease', kind: 'abbreviation' },
    ]);
  });
});

describe('DocumentDefinitions: the short form for chunks that spell out only the long form', () => {
  const definitions = new DocumentDefinitions([
    { short: 'HGA', long: 'human granulocytic anaplasmosis', kind: 'abbreviation' },
  ]);

  it('adds the short form where the long form stands alone, in any case and across lines', () => {
    const text = 'Human granulocytic\nanaplasmosis is treated with doxycycline.';
    expect(definitions.searchText('T\nsearch', text)).toBe('T\nsearch\nHGA');
  });

  it('adds nothing where the short form is written too, or the long form is not', () => {
    const both = 'Human granulocytic anaplasmosis (HGA) is a tick-borne disease.';
    expect(definitions.searchText('search', both)).toBe('search');
    expect(definitions.searchText('search', 'HGA is treated early.')).toBe('search');
    expect(definitions.searchText('search', 'granulocytic cells')).toBe('search');
  });
});

describe('a brand and its generic name, as the text pairs them', () => {
  it('finds the pair in either order, without the trademark sign', () => {
    expect(definitionsIn('Take lisinopril (Zestril) once a day.')).toEqual([
      { short: 'lisinopril', long: 'Zestril', kind: 'name' },
    ]);
    expect(definitionsIn('VYVANSE® (lisdexamfetamine dimesylate) capsules, for oral use')).toEqual([
      { short: 'VYVANSE', long: 'lisdexamfetamine dimesylate', kind: 'name' },
    ]);
  });

  it('pairs no words of everyday English, and no abbreviation with a name', () => {
    expect(definitionsIn('Severe pain (headache) is common.')).toEqual([]);
    expect(definitionsIn('Check the serum ferritin (see below).')).toEqual([]);
    expect(definitionsIn('Human granulocytic anaplasmosis (HGA) is spread by ticks.')).toEqual([
      { short: 'HGA', long: 'Human granulocytic anaplasmosis', kind: 'abbreviation' },
    ]);
  });

  it('adds no name to the search text (the model reads pairs in its passages instead)', () => {
    const names = new DocumentDefinitions([{ short: 'lisinopril', long: 'Zestril', kind: 'name' }]);
    expect(names.searchText('s', 'Stop lisinopril in pregnancy.')).toBe('s');
  });
});
