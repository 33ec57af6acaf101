import { describe, expect, it } from 'vitest';
import { rng } from '../../../../test/contract/random.js';
import { Postings } from './postings.js';

/** Chunks of Zipf-like words (a few very common, many rare), so MaxScore has lists to skip. */
function corpus(chunks: number, seed: number): string[][] {
  const r = rng(seed);
  const random = () => r.next();
  const word = () => `w${Math.floor(1 / (random() + 0.002))}`;
  return Array.from({ length: chunks }, () =>
    Array.from({ length: 5 + Math.floor(random() * 120) }, word),
  );
}

describe('Postings', () => {
  const chunks = corpus(3000, 7);
  const index = new Postings(chunks);
  const r = rng(11);
  const random = () => r.next();
  const queries = Array.from({ length: 60 }, () =>
    Array.from(
      { length: 1 + Math.floor(random() * 16) },
      () => `w${Math.floor(1 / (random() + 0.002))}`,
    ),
  );

  it('block-max MaxScore returns the exhaustive top k, ties apart', () => {
    for (const terms of queries) {
      for (const k of [1, 10, 50]) {
        const exact = index.exhaustive(terms, k).map((d) => index.scoreOf(terms, d));
        const fast = index.topK(terms, k).map((d) => index.scoreOf(terms, d));
        expect(fast.length).toBe(exact.length);
        fast.forEach((score, i) => {
          expect(score).toBeCloseTo(exact[i]!, 9);
        });
      }
    }
  });

  it('scores BM25 as computed by hand', () => {
    const terms = chunks[0]!.slice(0, 3);
    const [best] = index.exhaustive(terms, 1);
    const n = chunks.length;
    const avg = chunks.reduce((a, c) => a + c.length, 0) / n;
    const expected = [...new Set(terms)].reduce((sum, t) => {
      const df = chunks.filter((c) => c.includes(t)).length;
      const tf = chunks[best!]!.filter((w) => w === t).length;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      const norm = 1.2 * (1 - 0.75 + (0.75 * chunks[best!]!.length) / avg);
      return sum + (idf * tf * 2.2) / (tf + norm);
    }, 0);
    expect(index.scoreOf(terms, best!)).toBeCloseTo(expected, 4);
    expect(index.matching(['no-such-word'])).toBe(0);
    expect(index.topK(['no-such-word'], 10)).toEqual([]);
  });
});
