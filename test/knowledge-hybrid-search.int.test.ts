import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Database, Db } from '../src/db/client.js';
import { kbChunks, kbDocuments } from '../src/db/schema/index.js';
import { analyse } from '../src/modules/knowledge/lexical/analysis.js';
import { LexicalIndex } from '../src/modules/knowledge/lexical/index.js';
import { SearchService, type SearchResult } from '../src/modules/knowledge/search.js';
import type { CacheRegion } from '../src/platform/layered-cache.js';
import { createLogger } from '../src/platform/logger.js';
import type { EmbeddingsProvider } from '../src/providers/embeddings/types.js';
import { QdrantHybridStore } from '../src/providers/vectorstore/qdrant-hybrid.js';
import { openTestDatabase, type Backend } from './helpers/db.js';
import { Replay } from './helpers/qdrant-replay.js';

/**
 * SearchService with the hybrid store (KB_SEARCH_ENGINE=qdrant): one Qdrant query ranks and fuses,
 * the database says which of the ids it answers are live passages. Qdrant is the local replay
 * server of test/fixtures/qdrant/hybrid-search-service.json, whose exchanges were WRITTEN FROM
 * QDRANT'S API REFERENCE, NOT RECORDED FROM A RUNNING SERVER (none can run here).
 */

const DOC = '5d000000-0000-4000-8000-000000000001';
const JOB = '10b00000-0000-4000-8000-0000000000a1';
const OLD_JOB = '10b00000-0000-4000-8000-0000000000a0';
const OLD = '0a0a0a0a-0000-4000-8000-000000000001';
const [S1, S2, S3] = [
  '5e000000-0000-4000-8000-000000000001',
  '5e000000-0000-4000-8000-000000000002',
  '5e000000-0000-4000-8000-000000000003',
];

/** Every text embeds to the same vector: the dense prefetch's vector is known to the fixture. */
const embeddings: EmbeddingsProvider = {
  model: 'test-model',
  dimensions: 4,
  embed: (texts) => Promise.resolve(texts.map(() => Float32Array.from([1, 0, 0, 0]))),
};

/** An in-memory cache region (the layered cache's contract: a value kept is given back). */
function memoryRegion(): CacheRegion<SearchResult[]> {
  const kept = new Map<string, SearchResult[]>();
  return {
    get: async (id, load) => {
      const hit = kept.get(id);
      if (hit !== undefined) return hit;
      const value = await load();
      if (value !== undefined) kept.set(id, value);
      return value;
    },
    delete: (id) => {
      kept.delete(id);
      return Promise.resolve();
    },
  };
}

async function insertChunks(db: Db): Promise<void> {
  await db.insert(kbDocuments).values({
    id: DOC,
    title: 'Antiplatelets',
    category: 'cardiology',
    filename: 'antiplatelets.txt',
    contentType: 'text/plain',
    sizeBytes: 1,
    docKey: 'antiplatelets',
    contentHash: DOC,
    storageKey: DOC,
    status: 'indexed',
  });
  const chunk = (id: string, jobId: string, index: number, text: string, active: boolean) => ({
    id,
    documentId: DOC,
    docKey: 'antiplatelets',
    version: 1,
    category: 'cardiology',
    chunkIndex: index,
    text,
    jobId,
    active,
    embeddingModel: embeddings.model,
    searchText: text,
    terms: analyse(text).join(' '),
  });
  await db.insert(kbChunks).values([
    chunk(S1, JOB, 0, 'Aspirin 75 mg daily prevents a second stroke.', true),
    chunk(S2, JOB, 1, 'Aspirin reduces stroke risk after a transient ischaemic attack.', true),
    chunk(S3, JOB, 2, 'Clopidogrel is an alternative when aspirin is not tolerated.', true),
    // Written by an earlier job, replaced since (a reindex): no longer active, while Qdrant may
    // still hold its vectors until the indexer's delete runs.
    chunk(OLD, OLD_JOB, 0, 'Aspirin prevents stroke (as indexed before).', false),
  ]);
}

describe.each<Backend>(['postgres', 'pglite'])('hybrid search on Qdrant with %s', (backend) => {
  let opened: { database: Database; dispose(): Promise<void> };
  let replay: Replay;
  let lexical: LexicalIndex;

  beforeAll(async () => {
    opened = await openTestDatabase(backend);
    await insertChunks(opened.database.db);
    replay = await Replay.start('hybrid-search-service');
    lexical = new LexicalIndex(opened.database.db, { log: createLogger({ logLevel: 'silent' }) });
  });
  afterAll(async () => {
    await lexical.close();
    await replay.close();
    await opened.dispose();
  });

  it("reads Qdrant's fused ids back from the database, dropping those no longer live", async () => {
    const store = new QdrantHybridStore({ url: replay.url, collectionPrefix: 'mas_' });
    const version = vi.spyOn(lexical, 'version');
    const lexicalSearch = vi.spyOn(lexical, 'search');
    const search = new SearchService(
      opened.database.db,
      embeddings,
      store,
      lexical,
      {},
      memoryRegion(),
    );

    const results = await search.search('aspirin for stroke prevention?', { limit: 3 });
    // Qdrant answered OLD (inactive), S2, an unknown id, S1, S3: the live ones, in its order.
    expect(results.map((r) => r.chunkId)).toEqual([S2, S1, S3]);
    expect(results.map((r) => [r.score, r.lexicalRank, r.denseRank])).toEqual([
      [1, null, null],
      [1 / 2, null, null],
      [1 / 3, null, null],
    ]);
    expect(results[0]).toMatchObject({
      documentId: DOC,
      docKey: 'antiplatelets',
      title: 'Antiplatelets',
      version: 1,
      text: 'Aspirin reduces stroke risk after a transient ischaemic attack.',
    });
    expect(results[0]?.snippet).toContain('stroke');

    // Cached under a constant version: no second request (the replay holds one query).
    expect(await search.search('aspirin for stroke prevention?', { limit: 3 })).toEqual(results);
    // The lexical index was neither asked nor built.
    expect(version).not.toHaveBeenCalled();
    expect(lexicalSearch).not.toHaveBeenCalled();
    expect(lexical.state).toBeUndefined();
    replay.verify();
  });
});
