import { describe, expect, it } from 'vitest';
import { heardText, leadingWords } from './heard.js';

describe('heardText', () => {
  const spoken = [
    { text: 'Offer metformin first. [1]', ms: 2000, complete: true },
    { text: 'Review it in three months. [2]', ms: 2500, complete: true },
  ];

  it('keeps whole sentences whose audio was played, with their markers', () => {
    expect(heardText(spoken, 2000)).toBe('Offer metformin first. [1]');
    expect(heardText(spoken, 4500)).toBe(
      'Offer metformin first. [1] Review it in three months. [2]',
    );
    expect(heardText(spoken, 99_999)).toBe(
      'Offer metformin first. [1] Review it in three months. [2]',
    );
  });

  it('cuts the sentence being played at a word, in proportion, without its marker', () => {
    // 5 spoken words in 2500 ms: 1250 ms played is 2.5 words, so 2.
    expect(heardText(spoken, 3250)).toBe('Offer metformin first. [1] Review it');
    expect(heardText(spoken, 4499)).toBe('Offer metformin first. [1] Review it in three');
  });

  it('cuts by the words said, not the words displayed', () => {
    // "give five hundred milligrams twice daily" in 3000 ms: 1800 ms is 3.6 words, so 3, and
    // "mg" (said "milligrams", the fourth) was not heard.
    const dose = [{ text: 'Give 500 mg twice daily. [1]', ms: 3000, complete: true }];
    expect(heardText(dose, 1800)).toBe('Give 500');
    expect(heardText(dose, 2000)).toBe('Give 500 mg');
    // "check e g f r yearly": half of it is "check e g".
    const check = [{ text: 'Check eGFR yearly.', ms: 1200, complete: true }];
    expect(heardText(check, 600)).toBe('Check');
  });

  it('is empty when nothing was played', () => {
    expect(heardText(spoken, 0)).toBe('');
    expect(heardText([], 5000)).toBe('');
    expect(heardText(spoken, 100)).toBe('');
  });

  it('keeps nothing of a sentence whose audio the engine had not finished', () => {
    // 1000 ms made of a sentence that may last 3000: 900 ms played is not 90% of it.
    const unfinished = [
      { text: 'Offer metformin first. [1]', ms: 2000, complete: true },
      { text: 'Review it in three months. [2]', ms: 1000, complete: false },
    ];
    expect(heardText(unfinished, 2900)).toBe('Offer metformin first. [1]');
  });

  it('passes over a sentence with nothing to say (no audio) like a whole one', () => {
    const withRule = [
      { text: 'Offer metformin first. [1]', ms: 2000, complete: true },
      { text: '---', ms: 0, complete: true },
      { text: 'Review it in three months. [2]', ms: 2500, complete: true },
    ];
    expect(heardText(withRule, 3250)).toBe('Offer metformin first. [1] --- Review it');
  });
});

describe('leadingWords: the cut inside a sentence, by its spoken words', () => {
  // Said "Give five hundred milligrams twice daily": six words for five displayed.
  const sentence = 'Give 500 mg twice daily. [1]';

  it.each([
    [0, ''],
    [0.16, ''],
    // "give" heard (1/6 = 0.167).
    [0.17, 'Give'],
    // "give five": "500" not yet said whole.
    [0.34, 'Give'],
    // "give five hundred"; by displayed words (3 of 5 at 0.6 in the display) it would add "mg" too soon.
    [0.5, 'Give 500'],
    [0.6, 'Give 500'],
    [0.67, 'Give 500 mg'],
    [0.84, 'Give 500 mg twice'],
    [0.999, 'Give 500 mg twice'],
    [1, 'Give 500 mg twice daily.'],
  ])('at %f of its audio: %j', (share, words) => {
    expect(leadingWords(sentence, share)).toBe(words);
  });

  it('keeps a spelled acronym only once all its letters were said', () => {
    // "check e g f r yearly": six spoken words for three displayed.
    expect(leadingWords('Check eGFR yearly.', 0.5)).toBe('Check');
    expect(leadingWords('Check eGFR yearly.', 0.84)).toBe('Check eGFR');
  });

  it('does not end the cut on something that is not said', () => {
    // "give five milligrams then ten milligrams": three of six words heard.
    expect(leadingWords('Give 5 mg - then 10 mg.', 0.6)).toBe('Give 5 mg');
    expect(leadingWords('- a bullet', 0)).toBe('');
  });
});
