import { describe, expect, it } from 'vitest';
import { ExtractiveProvider, NO_ANSWER } from './extractive.js';
import { questionGroups } from './extractive-text.js';
import { looksLikeTopic } from './extractive-topic.js';
import type { Passage } from './types.js';

describe('looksLikeTopic', () => {
  it('takes clinical endings and capitalised names for topics', () => {
    for (const word of ['glaucoma', 'appendicitis', 'lithium', 'levothyroxine', 'chickenpox']) {
      expect(looksLikeTopic(word, false)).toBe(true);
    }
    expect(looksLikeTopic('Parkinson', false)).toBe(true);
    expect(looksLikeTopic('methotrexate', false)).toBe(true);
  });

  it('takes the names of the clinical vocabulary for topics, whatever they look like', () => {
    for (const word of ['measles', 'gout', 'scabies', 'mumps', 'Gout', 'post-measles']) {
      expect(looksLikeTopic(word, false)).toBe(true);
    }
    expect(looksLikeTopic('Measles', true)).toBe(true);
    // Ordinary words, even medical ones, are not in it.
    for (const word of ['fever', 'cough', 'tablet', 'flight']) {
      expect(looksLikeTopic(word, false)).toBe(false);
    }
  });

  it('leaves ordinary words, short look-alikes, acronyms and the first word alone', () => {
    for (const word of ['antidote', 'kilo', 'going', 'rate', 'line', 'together', 'GP', 'MART']) {
      expect(looksLikeTopic(word, false)).toBe(false);
    }
    expect(looksLikeTopic('Which', true)).toBe(false);
  });

  it('marks the question groups that name a topic', () => {
    const groups = questionGroups(
      'Which blood level is monitored on lithium in Parkinson disease?',
    );
    expect(groups.filter((g) => g.topic).map((g) => g.word)).toEqual(['lithium', 'parkinson']);
  });

  it('matches irregular plurals both ways', () => {
    const [woman] = questionGroups('woman');
    expect(woman?.alternatives).toEqual([['woman'], ['women']]);
    const [children] = questionGroups('children');
    expect(children?.alternatives).toEqual([['children'], ['child']]);
  });
});

const DRUG_Y: Passage = {
  n: 1,
  chunkId: '00000000-0000-4000-8000-000000000001',
  documentId: '00000000-0000-4000-8000-000000000100',
  docKey: 'drug-y',
  title: 'Drug Y in adults',
  version: 1,
  page: null,
  heading: 'Dosing',
  text: 'Drug Y is given at 5 mg per kg of body weight once a day.',
  score: 0.9,
};

describe('ExtractiveProvider: an absent topic name against an absent ordinary word', () => {
  const answer = (provider: ExtractiveProvider, question: string) =>
    provider.answer({
      messages: [{ role: 'user', content: question }],
      passages: [DRUG_Y],
      tools: [],
    });

  it('answers a lay rewording but refuses an uncovered condition', () => {
    const provider = new ExtractiveProvider();
    expect(answer(provider, 'How much drug Y per pound?')).toContain('5 mg per kg');
    expect(answer(provider, 'How much drug Y for someone with glaucoma?')).toBe(NO_ANSWER);
  });

  it('finds a lay word through the lexicon: "kilo" is "kg"', () => {
    const provider = new ExtractiveProvider({ tuning: { plainAbsentWeight: 8 } });
    expect(answer(provider, 'How much drug Y per kilo?')).toContain('5 mg per kg');
  });

  it('refuses both when an ordinary absent word weighs as much as a topic', () => {
    const provider = new ExtractiveProvider({ tuning: { plainAbsentWeight: 8 } });
    expect(answer(provider, 'How much drug Y per pound?')).toBe(NO_ANSWER);
  });
});
