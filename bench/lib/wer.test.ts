import { describe, expect, it } from 'vitest';
import { werWords, wordEdits, wordErrorRate } from './wer.js';

const split = (s: string) => (s === '' ? [] : s.split(' '));

describe('wordEdits', () => {
  it.each([
    ['a b c', 'a b c', 0, 0, 0],
    ['a b c', 'a x c', 1, 0, 0],
    ['a b c', 'a c', 0, 1, 0],
    ['a b c', 'a b c d', 0, 0, 1],
    ['a b c', '', 0, 3, 0],
    ['', 'a b', 0, 0, 2],
    ['the cat sat on the mat', 'cat sat in the the mat', 1, 1, 1],
  ])('%s | %s', (reference, hypothesis, substitutions, deletions, insertions) => {
    expect(wordEdits(split(reference), split(hypothesis))).toEqual({
      substitutions,
      deletions,
      insertions,
      words: split(reference).length,
    });
  });
});

describe('wordErrorRate', () => {
  it('is all errors over all reference words', () => {
    const edits = [
      wordEdits(split('a b c d'), split('a b c d')),
      wordEdits(split('a b'), split('x')),
    ];
    expect(wordErrorRate(edits)).toBeCloseTo(2 / 6);
  });
});

describe('werWords', () => {
  it('normalises case, numbers and punctuation on both sides alike', () => {
    expect(werWords('Is 140/90 too high? Give 2.5 mg.')).toEqual(
      split('is one hundred forty over ninety too high give two point five milligrams'),
    );
    expect(
      werWords('is one hundred forty over ninety too high give two point five milligrams'),
    ).toEqual(werWords('Is 140/90 too high? Give 2.5 mg.'));
  });
});
