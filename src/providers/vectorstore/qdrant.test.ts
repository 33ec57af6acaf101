import { afterEach, describe, expect, it, vi } from 'vitest';
import { Replay } from '../../../test/helpers/qdrant-replay.js';
import { VectorStoreError } from './errors.js';
import { createVectorStore } from './index.js';
import { collectionName, QdrantVectorStore } from './qdrant.js';
import type { VectorPoint } from './types.js';

/**
 * Contract tests against recorded Qdrant REST exchanges (test/fixtures/qdrant): a local server
 * (test/helpers/qdrant-replay.ts) answers each expected request in order and records anything the
 * adapter sends that the recording does not hold (method, path, query, headers given, or JSON
 * body).
 */

const MODEL = 'sentence-transformers/all-MiniLM-L6-v2';
const API_KEY = 'test-secret-key-0123456789';

let replay: Replay | undefined;
afterEach(async () => {
  await replay?.close();
  replay = undefined;
  vi.restoreAllMocks();
});

async function storeFor(fixture: string, options: { apiKey?: string; batchSize?: number } = {}) {
  replay = await Replay.start(fixture);
  const store = createVectorStore({
    kind: 'qdrant',
    url: replay.url,
    collectionPrefix: 'mas_',
    ...options,
  });
  return { store, replay };
}

const point = (
  id: string,
  vector: number[],
  documentId: string,
  docKey: string,
  category: string,
  jobId: string,
): VectorPoint => ({
  id,
  vector: Float32Array.from(vector),
  payload: { documentId, docKey, category, jobId },
});

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('expected a failure'),
    (err: unknown) => {
      expect(err).toBeInstanceOf(VectorStoreError);
      return err as VectorStoreError;
    },
  );

describe('Qdrant vector store (recorded exchanges)', () => {
  it('names one collection per model and size, safely', () => {
    expect(collectionName('mas_', MODEL, 4)).toBe('mas_sentence-transformers_all-MiniLM-L6-v2_4');
    expect(collectionName('p-', 'a b/c:d', 1536)).toBe('p-a_b_c_d_1536');
  });

  it('creates the collection and its payload indexes when missing', async () => {
    const { store, replay } = await storeFor('ensure-ready-create');
    expect(store.kind).toBe('qdrant');
    await store.probe();
    await store.ensureReady(4, MODEL);
    await store.probe();
    replay.verify();
  });

  it('carries on when another instance created the collection first', async () => {
    const { store, replay } = await storeFor('ensure-ready-race');
    await store.ensureReady(4, MODEL);
    replay.verify();
  });

  it('adds a missing index to an existing collection, once', async () => {
    const { store, replay } = await storeFor('ensure-ready-existing');
    await store.ensureReady(4, MODEL);
    await store.ensureReady(4, MODEL);
    replay.verify();
  });

  it('refuses an existing collection of another size', async () => {
    const { store, replay } = await storeFor('ensure-ready-wrong-size');
    const err = await failureOf(store.ensureReady(4, MODEL));
    expect(err.message).toMatch(/size 384 \(Cosine\), expected 4/);
    expect(err.retryable).toBe(false);
    replay.verify();
  });

  it('upserts in batches, searches with a category filter and deletes by filter', async () => {
    const { store, replay } = await storeFor('points', { batchSize: 2 });
    await store.ensureReady(4, MODEL);
    const doc = 'd1c0ffee-0000-4000-8000-000000000001';
    const doc2 = 'd1c0ffee-0000-4000-8000-000000000002';
    const [job1, job2] = [
      '10b00000-0000-4000-8000-000000000001',
      '10b00000-0000-4000-8000-000000000002',
    ];
    const [a, b, c] = [
      '5c56c793-69f3-4fbf-87e6-c4bf54c28c7e',
      '0f3a8d2e-6b1c-4e5f-9a7d-2c8b1e4f6a90',
      '9b2e4c6d-8f1a-4b3c-a5d7-e9f1b3c5d7e9',
    ];
    await store.upsert([
      point(a, [1, 0, 0, 0], doc, 'chest-pain', 'cardiology', job1),
      point(b, [0.5, 0.5, 0.5, 0.5], doc, 'chest-pain', 'cardiology', job1),
      point(c, [0, 0, 1, 0], doc2, 'stroke', 'neurology', job2),
    ]);
    const query = Float32Array.from([1, 0, 0, 0]);
    expect(await store.search(query, { limit: 5, category: 'cardiology' })).toEqual([
      { id: a, score: 1 },
      { id: b, score: 0.5 },
    ]);
    expect(await store.search(Float32Array.from([0, 0, 1, 0]), { limit: 2 })).toEqual([
      { id: c, score: 1 },
      { id: b, score: 0.5 },
    ]);
    expect(await store.search(query, { limit: 0 })).toEqual([]);
    await expect(store.search(new Float32Array(3), { limit: 1 })).rejects.toThrow(/3 dimensions/);
    await store.deleteByDocument(doc, { exceptJobId: job2 });
    await store.deleteByJob(job2);
    await store.deleteByDocument(doc2);
    replay.verify();
  });

  it('maps failures to retryable or not, never showing the API key', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => undefined); // the client warns: key over http
    const { store, replay } = await storeFor('errors', { apiKey: API_KEY });
    await store.ensureReady(4, MODEL);
    const query = Float32Array.from([1, 0, 0, 0]);
    const internal = await failureOf(store.search(query, { limit: 3 }));
    expect([internal.retryable, internal.status]).toEqual([true, 500]);
    expect(internal.message).toBe(
      'Qdrant search failed: HTTP 500: Service internal error: 1 of 1 read operations failed',
    );
    const gateway = await failureOf(store.search(query, { limit: 3 }));
    expect([gateway.retryable, gateway.message]).toEqual([true, 'Qdrant search failed: HTTP 502']);
    const badRequest = await failureOf(store.search(query, { limit: 3, category: 'cardiology' }));
    expect([badRequest.retryable, badRequest.status]).toEqual([false, 400]);
    expect(badRequest.message).toMatch(/Index required but not found for "category"/);
    const unauthorised = await failureOf(store.deleteByJob('10b00000-0000-4000-8000-000000000001'));
    expect([unauthorised.retryable, unauthorised.status]).toEqual([false, 401]);
    for (const err of [internal, gateway, badRequest, unauthorised]) {
      expect(`${err.message} ${err.stack ?? ''}`).not.toContain(API_KEY);
    }
    replay.verify();
  });

  it('reports an unreachable server as retryable, and use before ensureReady as not', async () => {
    const closed = await Replay.start('ensure-ready-wrong-size');
    const url = closed.url;
    await closed.close();
    const store = new QdrantVectorStore({ url, collectionPrefix: 'mas_', timeoutMs: 2000 });
    const err = await failureOf(store.ensureReady(4, MODEL));
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/^Qdrant read collection failed: network error \(ECONNREFUSED\)$/);
    const early = await failureOf(store.search(Float32Array.from([1, 0, 0, 0]), { limit: 1 }));
    expect(early.retryable).toBe(false);
  });
});
