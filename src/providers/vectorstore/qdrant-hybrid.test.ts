import { afterEach, describe, expect, it, vi } from 'vitest';
import { Replay } from '../../../test/helpers/qdrant-replay.js';
import { analyse, queryTerms } from '../../modules/knowledge/lexical/analysis.js';
import { SERVICE_BM25 } from '../../modules/knowledge/lexical/segments.js';
import { VectorStoreError } from './errors.js';
import {
  documentSparseVector,
  QdrantHybridStore,
  querySparseVector,
  termIndex,
} from './qdrant-hybrid.js';
import { isHybridStore, type VectorPoint } from './types.js';

/**
 * Contract tests of the hybrid store (KB_SEARCH_ENGINE=qdrant) against Qdrant REST exchanges in
 * test/fixtures/qdrant/hybrid-*.json, answered in order by a local server (qdrant-replay.ts) that
 * records anything else the store sends. These exchanges were WRITTEN FROM QDRANT'S API REFERENCE
 * AND DOCUMENTATION (collections with named and sparse vectors, the idf modifier, the Query API's
 * prefetch and rrf fusion; Qdrant 1.10+), NOT RECORDED FROM A RUNNING SERVER: none can run here.
 * They pin what the store sends; that a real Qdrant answers so is an assumption until checked
 * against one.
 */

const MODEL = 'sentence-transformers/all-MiniLM-L6-v2';
const API_KEY = 'test-secret-key-0123456789';
const DOC1 = 'd1c0ffee-0000-4000-8000-000000000001';
const DOC2 = 'd1c0ffee-0000-4000-8000-000000000002';
const JOB1 = '10b00000-0000-4000-8000-000000000001';
const JOB2 = '10b00000-0000-4000-8000-000000000002';
const A = '5c56c793-69f3-4fbf-87e6-c4bf54c28c7e';
const B = '0f3a8d2e-6b1c-4e5f-9a7d-2c8b1e4f6a90';
const C = '9b2e4c6d-8f1a-4b3c-a5d7-e9f1b3c5d7e9';
/** A chunk's text: "aspirin" three times, "stroke" twice, every other term once. */
const ASPIRIN_TEXT =
  'Aspirin 75 mg daily. Aspirin reduces stroke risk; aspirin prevents a second stroke.';

let replay: Replay | undefined;
afterEach(async () => {
  await replay?.close();
  replay = undefined;
  vi.restoreAllMocks();
});

async function storeFor(fixture: string, options: { apiKey?: string; batchSize?: number } = {}) {
  replay = await Replay.start(fixture);
  const store = new QdrantHybridStore({ url: replay.url, collectionPrefix: 'mas_', ...options });
  return { store, replay };
}

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('expected a failure'),
    (err: unknown) => {
      expect(err).toBeInstanceOf(VectorStoreError);
      return err as VectorStoreError;
    },
  );

describe('sparse BM25 vectors', () => {
  it('indexes a term by 32-bit FNV-1a over its UTF-8 bytes, unsigned', () => {
    // The published FNV-1a test vectors (offset basis, "a", "foobar").
    expect(termIndex('')).toBe(0x811c9dc5);
    expect(termIndex('a')).toBe(0xe40c292c);
    expect(termIndex('foobar')).toBe(0xbf9cf968);
    // Bytes, not UTF-16 code units: "é" is 0xc3 0xa9.
    const e = Math.imul(Math.imul(0x811c9dc5 ^ 0xc3, 0x01000193) ^ 0xa9, 0x01000193) >>> 0;
    expect(termIndex('é')).toBe(e);
    for (const term of ['aspirin', 'stroke', 'glp1', 'é', 'x'.repeat(300)]) {
      const index = termIndex(term);
      expect(Number.isInteger(index) && index >= 0 && index <= 0xffffffff).toBe(true);
      expect(termIndex(term)).toBe(index);
    }
    expect(termIndex('aspirin')).toBe(2598406055);
  });

  it('weighs each distinct term of a chunk by tf (k1 + 1) / (tf + k1), k1 = 1.2, b = 0', () => {
    // The weights need nothing from the collection only because there is no length normalisation.
    expect(SERVICE_BM25).toEqual({ k1: 1.2, b: 0 });
    const terms = analyse(ASPIRIN_TEXT);
    expect(terms.join(' ')).toBe(
      'aspirin 75 mg daili aspirin reduc stroke risk aspirin prevent second stroke',
    );
    const vector = documentSparseVector(terms);
    const weightOf = (term: string) => vector.values[vector.indices.indexOf(termIndex(term))];
    expect(weightOf('aspirin')).toBeCloseTo((3 * 2.2) / 4.2, 12);
    expect(weightOf('stroke')).toBeCloseTo((2 * 2.2) / 3.2, 12);
    expect(weightOf('risk')).toBe(1);
    expect(vector.indices).toHaveLength(9);
    expect(vector.indices).toEqual([...vector.indices].sort((a, b) => a - b));
    expect(new Set(vector.indices).size).toBe(vector.indices.length);
    expect(documentSparseVector(['aspirin', 'aspirin'], 2).values).toEqual([1.5]);
    expect(documentSparseVector([])).toEqual({ indices: [], values: [] });
    expect(documentSparseVector(['', ''])).toEqual({ indices: [], values: [] });
  });

  it('sums the weights of distinct terms that share an index', () => {
    // "glbvs" and "yacxa" collide in 32-bit FNV-1a.
    expect(termIndex('glbvs')).toBe(termIndex('yacxa'));
    expect(documentSparseVector(['glbvs', 'yacxa', 'yacxa', 'risk'])).toEqual({
      indices: [termIndex('glbvs'), termIndex('risk')].sort((a, b) => a - b),
      values: termIndex('glbvs') < termIndex('risk') ? [1 + 1.375, 1] : [1, 1 + 1.375],
    });
    expect(querySparseVector(['glbvs', 'yacxa'])).toEqual({
      indices: [termIndex('glbvs')],
      values: [2],
    });
  });

  it("gives each distinct term of a question the weight 1 (Qdrant's IDF does the rest)", () => {
    const terms = queryTerms('Aspirin for stroke prevention? aspirin');
    expect(terms).toEqual(['aspirin', 'stroke', 'prevent']);
    expect(querySparseVector(terms)).toEqual({
      indices: [2297946501, 2598406055, 3072721717],
      values: [1, 1, 1],
    });
    expect(querySparseVector(['aspirin', 'aspirin'])).toEqual({
      indices: [2598406055],
      values: [1],
    });
  });
});

describe('Qdrant hybrid store (exchanges written from the API reference)', () => {
  it('is told apart from the other stores', async () => {
    const { store } = await storeFor('hybrid-ensure-ready-create');
    expect(store.kind).toBe('qdrant-hybrid');
    expect(isHybridStore(store)).toBe(true);
  });

  it('creates the collection with a dense and an idf sparse vector, and its indexes', async () => {
    const { store, replay } = await storeFor('hybrid-ensure-ready-create');
    await store.probe();
    await store.ensureReady(4, MODEL);
    await store.ensureReady(4, MODEL);
    await store.probe();
    replay.verify();
  });

  it('refuses an existing collection without both named vectors', async () => {
    const { store, replay } = await storeFor('hybrid-ensure-ready-wrong-schema');
    const denseOnly = await failureOf(store.ensureReady(4, MODEL));
    expect(denseOnly.retryable).toBe(false);
    expect(denseOnly.message).toBe(
      'Qdrant collection mas_sentence-transformers_all-MiniLM-L6-v2_4_hybrid holds no dense ' +
        'vector "dense" and no sparse vector "bm25", expected "dense" of size 4 (Cosine) and ' +
        '"bm25" with modifier idf',
    );
    const noIdf = await failureOf(store.ensureReady(4, MODEL));
    expect(noIdf.message).toMatch(
      /holds "dense" of size 4 \(Cosine\) and "bm25" with modifier none,/,
    );
    await expect(store.hybridSearch(query([]))).rejects.toThrow(/before ensureReady/);
    replay.verify();
  });

  it('upserts sparse and dense vectors, queries both fused, and deletes by filter', async () => {
    const { store, replay } = await storeFor('hybrid-points', { batchSize: 2 });
    await store.ensureReady(4, MODEL);
    const point = (
      id: string,
      vector: number[],
      terms: string,
      doc: [string, string, string, string],
    ): VectorPoint => ({
      id,
      vector: Float32Array.from(vector),
      payload: { documentId: doc[0], docKey: doc[1], category: doc[2], jobId: doc[3] },
      terms,
    });
    const cardio: [string, string, string, string] = [DOC1, 'antiplatelets', 'cardiology', JOB1];
    await store.upsert([
      point(A, [1, 0, 0, 0], analyse(ASPIRIN_TEXT).join(' '), cardio),
      point(B, [0.5, 0.5, 0.5, 0.5], analyse('Warfarin needs INR monitoring.').join(' '), cardio),
      // All stopwords: no terms, an empty sparse vector.
      point(C, [0, 0, 1, 0], analyse('It is what it is.').join(' '), [
        DOC2,
        'stroke',
        'neurology',
        JOB2,
      ]),
    ]);
    const terms = queryTerms('aspirin for stroke prevention?');
    expect(await store.hybridSearch(query(terms))).toEqual([A, C, B]);
    const inCardiology = { ...query(terms), candidates: 20, limit: 4, category: 'cardiology' };
    expect(await store.hybridSearch(inCardiology)).toEqual([A, B]);
    const noTerms = { ...query(queryTerms('what is it')), vector: Float32Array.from([0, 0, 1, 0]) };
    expect(await store.hybridSearch({ ...noTerms, limit: 3 })).toEqual([C, B, A]);
    expect(
      await store.search(Float32Array.from([1, 0, 0, 0]), { limit: 2, category: 'cardiology' }),
    ).toEqual([
      { id: A, score: 1 },
      { id: B, score: 0.5 },
    ]);
    // Sent nothing for these.
    expect(await store.hybridSearch({ ...query(terms), limit: 0 })).toEqual([]);
    await expect(
      store.hybridSearch({ ...query(terms), vector: new Float32Array(3) }),
    ).rejects.toThrow(/3 dimensions/);
    const aborted = new AbortController();
    aborted.abort(new Error('gave up'));
    await expect(store.hybridSearch({ ...query(terms), signal: aborted.signal })).rejects.toThrow(
      'gave up',
    );
    await store.deleteByDocument(DOC1, { exceptJobId: JOB2 });
    await store.deleteByJob(JOB2);
    replay.verify();
  });

  it('maps failures to retryable or not, never showing the API key', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => undefined); // the client warns: key over http
    const { store, replay } = await storeFor('hybrid-errors', { apiKey: API_KEY });
    await store.ensureReady(4, MODEL);
    const terms = queryTerms('aspirin for stroke prevention?');
    const internal = await failureOf(store.hybridSearch(query(terms)));
    expect([internal.retryable, internal.status]).toEqual([true, 500]);
    expect(internal.message).toBe(
      'Qdrant hybrid search failed: HTTP 500: Service internal error: 1 of 1 read operations failed',
    );
    const unavailable = await failureOf(store.hybridSearch(query(terms)));
    expect([unavailable.retryable, unavailable.status]).toEqual([true, 503]);
    const badRequest = await failureOf(store.hybridSearch(query(terms)));
    expect([badRequest.retryable, badRequest.status]).toEqual([false, 400]);
    expect(badRequest.message).toMatch(/Not existing vector name error: bm25/);
    for (const err of [internal, unavailable, badRequest]) {
      expect(`${err.message} ${err.stack ?? ''}`).not.toContain(API_KEY);
    }
    replay.verify();
  });
});

function query(terms: readonly string[]) {
  return { terms, vector: Float32Array.from([1, 0, 0, 0]), candidates: 50, limit: 10 };
}
