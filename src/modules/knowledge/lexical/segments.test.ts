import { describe, expect, it } from 'vitest';
import { rng } from '../../../../test/contract/random.js';
import { Postings } from './postings.js';
import { LexicalSegments, SERVICE_BM25, type LexicalChunk } from './segments.js';

/** Chunks of Zipf-like words in documents of 10 chunks, in two categories. */
function chunks(count: number, seed: number, prefix = 'c'): LexicalChunk[] {
  const r = rng(seed);
  const word = () => `w${String(Math.floor(1 / (r.next() + 0.002)))}`;
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${String(i)}`,
    documentId: `${prefix}doc${String(Math.floor(i / 10))}`,
    jobId: `${prefix}job${String(Math.floor(i / 10))}`,
    category: i % 3 === 0 ? 'cardiology' : 'general',
    terms: Array.from({ length: 5 + r.int(80) }, word),
  }));
}

const queries = (seed: number) => {
  const r = rng(seed);
  return Array.from({ length: 40 }, () =>
    Array.from({ length: 1 + r.int(8) }, () => `w${String(Math.floor(1 / (r.next() + 0.002)))}`),
  );
};

describe('LexicalSegments', () => {
  const base = chunks(1500, 3);

  it('ranks as BM25 over its chunks when nothing changed', () => {
    const index = new LexicalSegments(base);
    const reference = new Postings(
      base.map((c) => c.terms),
      undefined,
      SERVICE_BM25,
    );
    for (const terms of queries(5)) {
      const expected = reference.exhaustive(terms, 10).map((d) => base[d]?.id);
      expect(index.search(terms, 10)).toEqual(expected);
    }
  });

  it('never answers a removed chunk, and keeps the job it is told to keep', () => {
    const index = new LexicalSegments(base);
    expect(index.removeDocument('cdoc3', null)).toBe(10);
    // A new version of document 4 is live: its other jobs' chunks go, these stay.
    const next = chunks(10, 9, 'n').map((c) => ({ ...c, documentId: 'cdoc4', jobId: 'job-new' }));
    expect(index.add(next)).toBe(10);
    expect(index.removeDocument('cdoc4', 'job-new')).toBe(10);
    for (const terms of queries(7)) {
      for (const id of index.search(terms, 50)) {
        const chunk = [...base, ...next].find((c) => c.id === id);
        expect(chunk?.documentId === 'cdoc3').toBe(false);
        if (chunk?.documentId === 'cdoc4') expect(chunk.jobId).toBe('job-new');
      }
    }
    expect(index.stats()).toMatchObject({ chunks: 1490, removed: 20, delta: 10 });
  });

  it('finds an added chunk at once, and adds a chunk it holds only once', () => {
    const index = new LexicalSegments(base);
    const added: LexicalChunk = {
      id: 'fresh',
      documentId: 'dfresh',
      jobId: 'jfresh',
      category: 'general',
      terms: ['zzunique', 'w1', 'w2'],
    };
    expect(index.add([added])).toBe(1);
    expect(index.add([added, { ...base[0]!, terms: ['zzunique'] }])).toBe(0);
    expect(index.search(['zzunique'], 5)).toEqual(['fresh']);
    expect(index.size).toBe(1501);
  });

  it('answers only chunks of the category asked, and nothing for an unknown one', () => {
    const index = new LexicalSegments(base);
    index.add(chunks(30, 11, 'd'));
    for (const terms of queries(13)) {
      for (const id of index.search(terms, 20, 'cardiology')) {
        const chunk = base.find((c) => c.id === id) ?? chunks(30, 11, 'd').find((c) => c.id === id);
        expect(chunk?.category).toBe('cardiology');
      }
    }
    expect(index.search(['w1'], 10, 'no-such-category')).toEqual([]);
  });

  it('asks for a rebuild once the delta or the removed chunks are a large share', () => {
    const index = new LexicalSegments(chunks(3000, 17));
    expect(index.needsRebuild()).toBe(false);
    for (let d = 0; d < 250; d += 1) index.removeDocument(`cdoc${String(d)}`, null);
    expect(index.needsRebuild()).toBe(true);
  });
});

describe('LexicalSegments: truncated words', () => {
  const chunk = (id: string, terms: string[]): LexicalChunk => ({
    id,
    documentId: `doc-${id}`,
    jobId: `job-${id}`,
    category: 'general',
    terms,
  });

  it('finds the longer terms a word begins, the most held first, in both segments', () => {
    const index = new LexicalSegments([
      chunk('a', ['toxoplasmosi', 'pregnanc']),
      chunk('b', ['toxoplasma', 'gondii']),
      chunk('c', ['toxoplasma', 'cat']),
      chunk('d', ['toxin']),
    ]);
    index.add([chunk('e', ['toxoplasmosi']), chunk('f', ['toxoplasmosi'])]);
    // Three letters longer at least: "toxin" is a word of its own, not a shortening of "tox".
    expect(index.truncations('toxo')).toEqual(['toxoplasmosi', 'toxoplasma']);
    expect(index.truncations('toxo', 1)).toEqual(['toxoplasmosi']);
    expect(index.truncations('tox')).not.toContain('toxin');
    expect(index.truncations('zzzz')).toEqual([]);
    expect(index.df('toxoplasmosi')).toBe(3);
    expect(index.df('toxo')).toBe(0);
  });
});
