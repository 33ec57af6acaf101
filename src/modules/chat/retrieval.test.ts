import { describe, expect, it } from 'vitest';
import type { SearchOptions, SearchResult, SearchService } from '../knowledge/search.js';
import { retrievePassages } from './retrieval.js';

function result(i: number): SearchResult {
  return {
    chunkId: `00000000-0000-4000-8000-00000000000${i}`,
    documentId: '00000000-0000-4000-8000-000000000100',
    docKey: 'hypertension',
    title: 'Hypertension in Adults',
    version: 2,
    page: i === 1 ? 3 : null,
    heading: 'Blood pressure targets',
    snippet: `snippet ${i}`,
    text: `The whole text of chunk ${i}. It has more than the snippet.`,
    score: 1 / i,
    lexicalRank: i,
    denseRank: null,
  };
}

/** A SearchService answering two results and remembering what it was asked. */
function fakeSearch() {
  const calls: { query: string; options: SearchOptions }[] = [];
  const search = {
    search: (query: string, options: SearchOptions) => {
      calls.push({ query, options });
      return Promise.resolve([result(1), result(2)]);
    },
  } as unknown as SearchService;
  return { search, calls };
}

describe('retrievePassages', () => {
  it("numbers the results from 1, best first, with each chunk's whole text, no snippet asked", async () => {
    const { search, calls } = fakeSearch();
    const passages = await retrievePassages(search, 'BP target over 80', { limit: 2 });
    expect(calls).toEqual([
      { query: 'BP target over 80', options: { limit: 2, category: undefined, snippets: false } },
    ]);
    expect(passages).toEqual([
      {
        n: 1,
        chunkId: result(1).chunkId,
        documentId: result(1).documentId,
        docKey: 'hypertension',
        title: 'Hypertension in Adults',
        version: 2,
        page: 3,
        heading: 'Blood pressure targets',
        text: result(1).text,
        score: 1,
      },
      expect.objectContaining({ n: 2, text: result(2).text, page: null, score: 0.5 }),
    ]);
  });

  it('numbers from startAt and passes the category on', async () => {
    const { search, calls } = fakeSearch();
    const passages = await retrievePassages(search, 'q', {
      limit: 5,
      startAt: 4,
      category: 'guidelines',
    });
    expect(passages.map((p) => p.n)).toEqual([4, 5]);
    expect(calls[0]?.options).toEqual({ limit: 5, category: 'guidelines', snippets: false });
  });
});
