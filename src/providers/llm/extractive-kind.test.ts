import { describe, expect, it } from 'vitest';
import { ExtractiveProvider, NO_ANSWER } from './extractive.js';
import { askedKinds, statedKinds, statesRequired, withoutCueWords } from './extractive-kind.js';
import { questionGroups } from './extractive-text.js';
import type { Passage } from './types.js';

describe('answer kinds', () => {
  it('reads the kind of statement a question asks for from its form', () => {
    expect(askedKinds('How long is prostatitis treated?')).toEqual(['duration']);
    expect(askedKinds('At what potassium should the ACE inhibitor be stopped?')).toEqual(['value']);
    expect(askedKinds('What HbA1c level diagnoses diabetes?')).toEqual(['value']);
    expect(askedKinds('How often should retinal screening be done?')).toEqual(['frequency']);
    expect(askedKinds('How soon should the ECG be recorded?')).toEqual(['time']);
    expect(askedKinds("Why shouldn't nitrofurantoin be given at term?")).toEqual([
      'reason',
      'negation',
    ]);
    expect(askedKinds('Which antibiotic for pneumonia?')).toEqual([]);
  });

  it('asks for a dose only where the dose is what is asked, not a word of the topic', () => {
    expect(askedKinds("What's the rifampin dose for the 4-month regimen?")).toContain('dose');
    expect(askedKinds('IVIG dose in g/kg for Kawasaki?')).toContain('dose');
    expect(askedKinds('Max daily dose of lisdexamfetamine for ADHD?')).toContain('dose');
    expect(askedKinds('How long after the last ACE inhibitor dose can it begin?')).not.toContain(
      'dose',
    );
    expect(askedKinds('Which kidney function formula should be used to dose a DOAC?')).toEqual([]);
    expect(askedKinds('What % of pts get it again?')).toContain('share');
    expect(askedKinds('Migraine F:M ratio?')).toContain('ratio');
    expect(askedKinds("What's the half-life of drug X?")).toContain('duration');
  });

  it('takes a dose, a share or a value as stated only when written as one', () => {
    const dose = askedKinds('Colchicine dose?');
    expect(statesRequired('Your doctor may prescribe colchicine.', dose)).toBe(false);
    expect(statesRequired('Give colchicine 0.5 mg twice daily.', dose)).toBe(true);
    expect(statesRequired('Maximum dose is 30 mg/day.', dose)).toBe(true);
    const share = askedKinds('What percentage relapse?');
    expect(statesRequired('It recurs in 15 to 30 percent of people.', share)).toBe(true);
    expect(statesRequired('It often recurs.', share)).toBe(false);
    const value = askedKinds('What titer is diagnostic?');
    expect(value).toEqual(['value']);
    expect(statesRequired('At least one of the variants is common.', value)).toBe(false);
    expect(statesRequired('Most people have the variants.4 However, few do.', value)).toBe(false);
    expect(statesRequired('Four puffs are given at first.', value)).toBe(true);
    // Kinds that only rank never stop a sentence from answering.
    expect(statesRequired('It settles at diagnosis.', askedKinds('When does it settle?'))).toBe(
      true,
    );
  });

  it('finds the kinds a sentence states', () => {
    const asked = askedKinds('How long, and why not, and how often?');
    expect(statedKinds('Treat for seven days.', asked)).toEqual(['duration']);
    expect(statedKinds('Check it every year.', asked)).toEqual(['frequency']);
    expect(statedKinds('Do not use it because it is toxic.', asked)).toEqual([
      'reason',
      'negation',
    ]);
  });

  it('drops the words that only ask ("long" in "how long") from the question terms', () => {
    expect(withoutCueWords('How long should someone sit still?')).toBe(
      'How should someone sit still?',
    );
    const words = questionGroups(withoutCueWords('How long is a long-term catheter left?'));
    expect(words.map((g) => g.word)).toEqual(['long term', 'cathet', 'left']);
  });

  it('ignores the first half of a contraction', () => {
    expect(questionGroups("Why shouldn't lithium be stopped?").map((g) => g.word)).toEqual([
      'lithium',
      'stopp',
    ]);
  });
});

function passage(text: string): Passage {
  return {
    n: 1,
    chunkId: '00000000-0000-4000-8000-000000000001',
    documentId: '00000000-0000-4000-8000-000000000100',
    docKey: 'drug-x',
    title: 'Drug X in adults',
    version: 1,
    page: null,
    heading: 'Drug X',
    text,
    score: 0.9,
  };
}

// Pairs of sentences sharing their words: only the second of each states what is asked.
const DRUG_X = passage(
  'Drug X blood levels are checked after any change in the dose. ' +
    'Drug X blood levels are checked every three months. ' +
    'Drug X is paused after surgery if the wound is infected. ' +
    'Drug X is paused after surgery for two weeks. ' +
    'Drug X is taken by most people with gout. ' +
    'Drug X must not be taken by people with liver disease. ' +
    'Drug X is stopped in pregnancy by the specialist team. ' +
    'Drug X is stopped in pregnancy because it harms the fetus. ' +
    'Drug X is paused when the blood level is high. ' +
    'Drug X is paused when the blood level is above 8 mg/L.',
);

describe('ExtractiveProvider: the sentence that carries the asked-for aspect', () => {
  const provider = new ExtractiveProvider({ tuning: { maxSentences: 1 } });
  const answer = (question: string) =>
    provider.answer({
      messages: [{ role: 'user', content: question }],
      passages: [DRUG_X],
      tools: [],
    });

  it('a frequency for "how often"', () => {
    expect(answer('How often are drug X blood levels checked?')).toContain('every three months');
  });

  it('a duration for "how long"', () => {
    expect(answer('How long is drug X paused after surgery?')).toContain('for two weeks');
  });

  it('a prohibition for "who must not"', () => {
    expect(answer('Who must not take drug X?')).toContain('must not be taken');
  });

  it('a reason for "why"', () => {
    expect(answer('Why is drug X stopped in pregnancy?')).toContain('because it harms');
  });

  it('no answer when no sentence gives the asked-for dose, however well it names the drug', () => {
    expect(answer('What is the usual dose of drug X after surgery?')).toBe(NO_ANSWER);
  });

  it('a value for "at what level", and the passage cited', () => {
    const text = answer('At what blood level is drug X paused?');
    expect(text).toBe('Drug X is paused when the blood level is above 8 mg/L. [1]');
  });
});
