import { describe, expect, it } from 'vitest';
import { isEveryday } from './extractive-text.js';
import { notNouns } from './question-pos.js';

describe('the words of a question that are not what it is about', () => {
  it('finds the verbs, adjectives and adverbs, not the nouns', () => {
    const words = notNouns('Vaccinated dog tangled with a rabid skunk - how long do we watch it?');
    expect(words).toContain('tangled');
    expect(words).toContain('watch');
    expect(words).not.toContain('dog');
    expect(words).not.toContain('skunk');
  });

  it('leaves the nouns of an everyday topic as nouns', () => {
    const words = notNouns('How should an ankle sprain be managed?');
    expect(words).not.toContain('ankle');
    expect(words).not.toContain('sprain');
  });
});

describe('isEveryday', () => {
  it('is everyday English in every part, not a word of the field or an abbreviation', () => {
    expect(isEveryday('tangled')).toBe(true);
    expect(isEveryday('Scooping')).toBe(true);
    expect(isEveryday('titer')).toBe(false);
    expect(isEveryday('GF')).toBe(false);
    expect(isEveryday('enteric-coated')).toBe(false);
  });
});
