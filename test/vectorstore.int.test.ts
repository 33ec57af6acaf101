import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Database, Db } from '../src/db/client.js';
import { kbChunks, kbDocuments, kbVectors } from '../src/db/schema/index.js';
import { EmbeddedVectorStore } from '../src/providers/vectorstore/embedded.js';
import { kbVectorsRepo } from '../src/providers/vectorstore/embedded-repo.js';
import { VectorStoreError } from '../src/providers/vectorstore/errors.js';
import type { VectorPoint } from '../src/providers/vectorstore/types.js';
import { openTestDatabase, type Backend } from './helpers/db.js';

const MODEL = 'test-model';
const DIMS = 4;

const unit = (...xs: number[]) => {
  const norm = Math.hypot(...xs);
  return Float32Array.from(xs, (x) => x / norm);
};

/** A document with `count` chunks written by `jobId`, as the indexer leaves them. */
async function insertDocument(db: Db, category: string, count: number, jobId = randomUUID()) {
  const documentId = randomUUID();
  const docKey = `doc-${documentId.slice(0, 8)}`;
  await db.insert(kbDocuments).values({
    id: documentId,
    title: docKey,
    category,
    filename: `${docKey}.txt`,
    contentType: 'text/plain',
    sizeBytes: 1,
    docKey,
    contentHash: documentId,
    storageKey: docKey,
  });
  const chunkIds = await insertChunks(db, { documentId, docKey, category }, count, jobId, 0);
  return { documentId, docKey, category, jobId, chunkIds };
}

async function insertChunks(
  db: Db,
  doc: { documentId: string; docKey: string; category: string },
  count: number,
  jobId: string,
  firstIndex: number,
): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  await db.insert(kbChunks).values(
    ids.map((id, i) => ({
      id,
      ...doc,
      version: 1,
      chunkIndex: firstIndex + i,
      text: 'text',
      jobId,
      embeddingModel: MODEL,
      searchText: 'text',
    })),
  );
  return ids;
}

type Doc = Awaited<ReturnType<typeof insertDocument>>;
const point = (doc: Doc, id: string, vector: Float32Array, jobId = doc.jobId): VectorPoint => ({
  id,
  vector,
  payload: { documentId: doc.documentId, docKey: doc.docKey, category: doc.category, jobId },
});

describe.each<Backend>(['postgres', 'pglite'])('embedded vector store on %s', (backend) => {
  let opened: { database: Database; dispose(): Promise<void> };
  beforeAll(async () => {
    opened = await openTestDatabase(backend);
  });
  afterAll(() => opened.dispose());
  const db = () => opened.database.db;
  /** Each test uses its own model, so the tests do not see each other's vectors. */
  const newStore = async (model = `${MODEL}-${randomUUID()}`, maxStalenessMs = 0) => {
    const store = new EmbeddedVectorStore(db(), { maxStalenessMs, pageSize: 2 });
    await store.ensureReady(DIMS, model);
    return store;
  };

  it('ranks by cosine similarity and filters by category', async () => {
    const store = await newStore();
    const cardio = await insertDocument(db(), 'cardiology', 3);
    const neuro = await insertDocument(db(), 'neurology', 1);
    const [a, b, c] = cardio.chunkIds as [string, string, string];
    const [d] = neuro.chunkIds as [string];
    await store.upsert([
      point(cardio, a, unit(1, 0, 0, 0)),
      point(cardio, b, unit(1, 1, 0, 0)),
      point(cardio, c, unit(0, 0, 1, 0)),
      point(neuro, d, unit(1, 0.1, 0, 0)),
    ]);
    const hits = await store.search(unit(1, 0, 0, 0), { limit: 3 });
    expect(hits.map((h) => h.id)).toEqual([a, d, b]);
    expect(hits[0]?.score).toBeCloseTo(1, 6);
    expect(hits[2]?.score).toBeCloseTo(Math.SQRT1_2, 6);
    const cardioHits = await store.search(unit(1, 0, 0, 0), { limit: 5, category: 'cardiology' });
    expect(cardioHits.map((h) => h.id)).toEqual([a, b, c]);
    expect(await store.search(unit(1, 0, 0, 0), { limit: 5, category: 'none' })).toEqual([]);
  });

  it('answers through its approximate graph past approximateFrom, linked in its thread', async () => {
    const onThreadEnded = vi.fn();
    const store = new EmbeddedVectorStore(db(), {
      maxStalenessMs: 0,
      approximateFrom: 1000,
      onThreadEnded,
    });
    await store.ensureReady(DIMS, `${MODEL}-${randomUUID()}`);
    const doc = await insertDocument(db(), 'general', 2000);
    const vectors = doc.chunkIds.map((_, i) => unit(Math.cos(i), Math.sin(i), Math.cos(i / 7), 1));
    await store.upsert(doc.chunkIds.map((id, i) => point(doc, id, vectors[i] ?? unit(1, 0, 0, 0))));
    const query = unit(1, 0.2, 0.5, 1);
    const dot = (v: Float32Array) => v.reduce((sum, x, j) => sum + x * (query[j] ?? 0), 0);
    const expected = doc.chunkIds
      .map((id, i) => ({ id, score: dot(vectors[i] ?? query) }))
      .sort((x, y) => y.score - x.score)
      .slice(0, 3);
    expect(await store.status()).toEqual({ rows: 0, waitingRows: 0, ranking: 'exact' });
    const check = async () => {
      const hits = await store.search(query, { limit: 3 });
      expect(hits.map((h) => h.id)).toEqual(expected.map((e) => e.id));
      expect(hits[0]?.score).toBeCloseTo(expected[0]?.score ?? NaN, 5);
    };
    // The first search loads the copy; its rows are then linked between the thread's messages.
    await check();
    await vi.waitFor(async () => {
      expect(await store.status()).toEqual({ rows: 2000, waitingRows: 0, ranking: 'approximate' });
    });
    await check();
    expect(onThreadEnded).not.toHaveBeenCalled();
    await store.close();
  });

  it('replaces a vector upserted again and stores it as float32 little-endian', async () => {
    const store = await newStore();
    const doc = await insertDocument(db(), 'general', 2);
    const [a, b] = doc.chunkIds as [string, string];
    await store.upsert([point(doc, a, unit(1, 0, 0, 0)), point(doc, b, unit(0, 1, 0, 0))]);
    await store.upsert([point(doc, a, unit(0, 0, 0, 1))]);
    expect((await store.search(unit(0, 0, 0, 1), { limit: 1 }))[0]?.id).toBe(a);
    expect((await store.search(unit(1, 0, 0, 0), { limit: 2 })).map((h) => h.id)).toEqual([b, a]);
    const [row] = await db().select().from(kbVectors).where(eq(kbVectors.chunkId, a));
    // 0, 0, 0 and 1.0f (0x3f800000), each little-endian.
    expect(Buffer.from(row?.embedding ?? []).toString('hex')).toBe(`${'0'.repeat(24)}0000803f`);
  });

  it('deletes a document except the vectors of the job that replaced them', async () => {
    const store = await newStore();
    const doc = await insertDocument(db(), 'general', 2);
    const [oldA, oldB] = doc.chunkIds as [string, string];
    await store.upsert([point(doc, oldA, unit(1, 0, 0, 0)), point(doc, oldB, unit(0, 1, 0, 0))]);
    const newJob = randomUUID();
    const [fresh] = (await insertChunks(db(), doc, 1, newJob, 10)) as [string];
    await store.upsert([point(doc, fresh, unit(1, 0.2, 0, 0), newJob)]);
    expect(await store.search(unit(1, 0, 0, 0), { limit: 5 })).toHaveLength(3);

    await store.deleteByDocument(doc.documentId, { exceptJobId: newJob });
    expect((await store.search(unit(1, 0, 0, 0), { limit: 5 })).map((h) => h.id)).toEqual([fresh]);
    await store.deleteByDocument(doc.documentId);
    expect(await store.search(unit(1, 0, 0, 0), { limit: 5 })).toEqual([]);
    expect(await db().select().from(kbVectors).where(eq(kbVectors.documentId, doc.documentId)))
      .toEqual([]); // prettier-ignore
  });

  it('deletes the vectors one job wrote', async () => {
    const store = await newStore();
    const doc = await insertDocument(db(), 'general', 1);
    const failedJob = randomUUID();
    const [kept] = doc.chunkIds as [string];
    const [failed] = (await insertChunks(db(), doc, 1, failedJob, 5)) as [string];
    await store.upsert([
      point(doc, kept, unit(1, 0, 0, 0)),
      point(doc, failed, unit(1, 0, 0, 0), failedJob),
    ]);
    await store.deleteByJob(failedJob);
    expect((await store.search(unit(1, 0, 0, 0), { limit: 5 })).map((h) => h.id)).toEqual([kept]);
  });

  it("keeps two instances on one database in step with each other's writes", async () => {
    const model = `${MODEL}-${randomUUID()}`;
    const first = await newStore(model);
    const second = await newStore(model);
    const doc = await insertDocument(db(), 'general', 4);
    const [a, b, c, d] = doc.chunkIds as [string, string, string, string];
    expect(await second.search(unit(1, 0, 0, 0), { limit: 5 })).toEqual([]);

    await first.upsert([point(doc, a, unit(1, 0, 0, 0)), point(doc, b, unit(0, 1, 0, 0))]);
    await first.upsert([point(doc, c, unit(0, 0, 1, 0))]);
    const ids = async (store: EmbeddedVectorStore) =>
      (await store.search(unit(1, 1, 1, 1), { limit: 10 })).map((h) => h.id).sort();
    expect(await ids(second)).toEqual([a, b, c].sort());

    await second.deleteByJob(doc.jobId);
    await second.upsert([point(doc, d, unit(0, 0, 0, 1))]);
    expect(await ids(first)).toEqual([d]);
    expect(await ids(second)).toEqual([d]);
  });

  it('loads the copy in ensureReady when asked to preload', async () => {
    const model = `${MODEL}-${randomUUID()}`;
    const doc = await insertDocument(db(), 'general', 1);
    const [a] = doc.chunkIds as [string];
    await (await newStore(model)).upsert([point(doc, a, unit(1, 0, 0, 0))]);
    let clock = 0;
    const store = new EmbeddedVectorStore(db(), { preload: true, now: () => clock });
    await store.ensureReady(DIMS, model);
    await db().delete(kbVectors).where(eq(kbVectors.chunkId, a)); // behind the store's back
    clock = 10; // within the default staleness bound: served from the preloaded copy
    expect((await store.search(unit(1, 0, 0, 0), { limit: 5 })).map((h) => h.id)).toEqual([a]);
  });

  it('sees other instances only after the staleness bound, its own writes at once', async () => {
    const model = `${MODEL}-${randomUUID()}`;
    let clock = 0;
    const reader = new EmbeddedVectorStore(db(), { maxStalenessMs: 1000, now: () => clock });
    await reader.ensureReady(DIMS, model);
    const writer = await newStore(model);
    const doc = await insertDocument(db(), 'general', 2);
    const [a, b] = doc.chunkIds as [string, string];
    expect(await reader.search(unit(1, 0, 0, 0), { limit: 5 })).toEqual([]);
    await writer.upsert([point(doc, a, unit(1, 0, 0, 0))]);
    clock = 999;
    expect(await reader.search(unit(1, 0, 0, 0), { limit: 5 })).toEqual([]);
    clock = 1000;
    expect((await reader.search(unit(1, 0, 0, 0), { limit: 5 })).map((h) => h.id)).toEqual([a]);
    await reader.upsert([point(doc, b, unit(0.9, 0.1, 0, 0))]);
    expect(await reader.search(unit(1, 0, 0, 0), { limit: 5 })).toHaveLength(2);
  });

  it('answers from its copy while another search catches up', async () => {
    const model = `${MODEL}-${randomUUID()}`;
    let clock = 0;
    const reader = new EmbeddedVectorStore(db(), { maxStalenessMs: 1000, now: () => clock });
    await reader.ensureReady(DIMS, model);
    const writer = await newStore(model);
    const doc = await insertDocument(db(), 'general', 2);
    const [a, b] = doc.chunkIds as [string, string];
    await writer.upsert([point(doc, a, unit(1, 0, 0, 0))]);
    expect(await reader.search(unit(1, 0, 0, 0), { limit: 5 })).toHaveLength(1);
    await writer.upsert([point(doc, b, unit(0.9, 0.1, 0, 0))]);
    // The next catch-up's state read is held, as a busy database would hold it.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const readState = kbVectorsRepo.readState.bind(kbVectorsRepo);
    const spy = vi.spyOn(kbVectorsRepo, 'readState').mockImplementationOnce(async (d) => {
      await held;
      return readState(d);
    });
    try {
      clock = 1000;
      const catchingUp = reader.search(unit(1, 0, 0, 0), { limit: 5 });
      // Meanwhile another search is answered from the copy as it is, without waiting.
      expect(await reader.search(unit(1, 0, 0, 0), { limit: 5 })).toHaveLength(1);
      release();
      expect(await catchingUp).toHaveLength(2);
    } finally {
      release();
      spy.mockRestore();
    }
  });

  it('ignores vectors of another model and checks dimensions', async () => {
    const doc = await insertDocument(db(), 'general', 2);
    const [a, b] = doc.chunkIds as [string, string];
    const old = await newStore();
    await old.upsert([point(doc, a, unit(1, 0, 0, 0))]);
    const current = await newStore();
    await current.upsert([point(doc, b, unit(1, 0, 0, 0))]);
    expect((await current.search(unit(1, 0, 0, 0), { limit: 5 })).map((h) => h.id)).toEqual([b]);
    await expect(current.search(new Float32Array(3), { limit: 1 })).rejects.toThrow(
      VectorStoreError,
    );
    await expect(current.upsert([point(doc, a, new Float32Array(5))])).rejects.toThrow(
      /5 dimensions/,
    );
    const notReady = new EmbeddedVectorStore(db());
    await expect(notReady.search(unit(1, 0, 0, 0), { limit: 1 })).rejects.toThrow(/ensureReady/);
    await expect(notReady.probe()).resolves.toBeUndefined();
  });

  it('loses the vectors of deleted chunks with them', async () => {
    const store = await newStore();
    const doc = await insertDocument(db(), 'general', 1);
    const [a] = doc.chunkIds as [string];
    await store.upsert([point(doc, a, unit(1, 0, 0, 0))]);
    await db().delete(kbDocuments).where(eq(kbDocuments.id, doc.documentId));
    expect(await db().select().from(kbVectors).where(eq(kbVectors.chunkId, a))).toEqual([]);
    // The cascade bypassed the store; the service's deleteByDocument then clears the copy.
    await store.deleteByDocument(doc.documentId);
    expect(await store.search(unit(1, 0, 0, 0), { limit: 5 })).toEqual([]);
  });
});
