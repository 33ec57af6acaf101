import { LexicalIndex } from '../../src/modules/knowledge/lexical/index.js';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import { openDatabase, queryRows, type Database } from '../../src/db/client.js';
import { runMigrations } from '../../src/db/migrate.js';
import { users } from '../../src/db/schema/index.js';
import { SYSTEM_CONTEXT, AuditService } from '../../src/modules/audit/service.js';
import { DEFAULT_BUDGETS } from '../../src/config-knowledge.js';
import { ExtractionPool } from '../../src/modules/knowledge/extraction-pool.js';
import { Indexer } from '../../src/modules/knowledge/indexer.js';
import { jobStateCounter } from '../../src/modules/knowledge/job-states.js';
import { SearchService, type SearchTuning } from '../../src/modules/knowledge/search.js';
import { Glossary } from '../../src/modules/knowledge/glossary.js';
import { KnowledgeService } from '../../src/modules/knowledge/service.js';
import { LocalDirectoryStore } from '../../src/platform/file-store.js';
import { createMetrics } from '../../src/platform/metrics.js';
import type { EmbeddingsProvider } from '../../src/providers/embeddings/types.js';
import { createVectorStore, type VectorStore } from '../../src/providers/vectorstore/index.js';

/** One stored chunk: what a hit is judged on. */
export interface StoredChunk {
  id: string;
  docKey: string;
  text: string;
}

/** The knowledge base with the corpus indexed by the service's own code. */
export interface Pipeline {
  database: Database;
  search: SearchService;
  embeddings: EmbeddingsProvider;
  vectors: VectorStore;
  chunks: StoredChunk[];
  /** The knowledge base's glossary, as a chat turn reads it. */
  glossary: Glossary;
  /** A search service over the same index with other fusion settings (tuning). */
  withTuning: (tuning: Partial<SearchTuning>) => SearchService;
  close: () => Promise<void>;
}

const CATEGORY = 'guidelines';

/** The `# Title` line, as an uploader would type it; the file name otherwise. */
export function titleOf(text: string, docKey: string): string {
  return /^# (.+)$/m.exec(text)?.[1]?.trim() ?? docKey;
}

/**
 * An in-memory PGlite (or `databaseUrl`, an empty database to migrate), the knowledge services
 * wired as src/modules/knowledge/wiring.ts does (embedded vector store), every `.txt` of
 * `corpusDir` stored in a local file store in a temporary directory, registered through
 * KnowledgeService and indexed by the Indexer, one job after the other.
 */
export async function indexCorpus(
  corpusDir: string,
  embeddings: EmbeddingsProvider,
  options: { databaseUrl?: string | undefined } = {},
): Promise<Pipeline> {
  const database = await openDatabase({ url: options.databaseUrl });
  const dir = await mkdtemp(join(tmpdir(), 'retrieval-eval-'));
  const pool = new ExtractionPool({ threads: 1, maxHeapMb: 1024 });
  let lexical: LexicalIndex | undefined;
  let vectors: VectorStore | undefined;
  const close = async () => {
    await lexical?.close();
    // The embedded store's dense copy lives in a thread, which would keep the process alive.
    await vectors?.close();
    await pool.destroy();
    await database.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await runMigrations(database);
    const { db } = database;
    const log = pino({ level: 'silent' });
    const files = new LocalDirectoryStore(dir);
    const store = createVectorStore({ kind: 'embedded', db, maxStalenessMs: 0 });
    vectors = store;
    const states = jobStateCounter(createMetrics().kbJobs);
    const options = { leaseMs: 60_000, retryBaseMs: 1000, batchSize: 32, watchMs: 1000 };
    // The provider under evaluation embeds (it may be tuned), not the threads' default one.
    const parts = { db, files, embeddings, vectors: store, log, states, pool };
    const indexer = new Indexer(
      { ...parts, budgets: DEFAULT_BUDGETS, embedInThreads: false },
      options,
    );
    const jobs: string[] = [];
    const sink = { enqueue: (job: { id: string }) => Promise.resolve(void jobs.push(job.id)) };
    const audit = new AuditService(db);
    const knowledge = new KnowledgeService(db, files, store, audit, sink, log, 0, states);
    const actor = { id: randomUUID(), email: 'eval@example.test' };
    await db
      .insert(users)
      .values({ id: actor.id, email: actor.email, fullName: 'Evaluation', passwordHash: 'x' });
    const names = (await readdir(corpusDir)).filter((f) => f.endsWith('.txt')).sort();
    for (const name of names) {
      const bytes = await readFile(join(corpusDir, name));
      const docKey = name.replace(/\.txt$/, '');
      const documentId = randomUUID();
      const storageKey = `kb/${documentId}/original`;
      const { size } = await files.put(storageKey, Readable.from([bytes]));
      await knowledge.register(
        actor,
        {
          documentId,
          storageKey,
          title: titleOf(bytes.toString('utf8'), docKey),
          category: CATEGORY,
          docKey,
          filename: name,
          contentType: 'text/plain',
          sizeBytes: size,
          contentHash: createHash('sha256').update(bytes).digest('hex'),
        },
        SYSTEM_CONTEXT,
      );
    }
    for (const job of jobs) {
      const outcome = await indexer.run(job);
      if (outcome.kind !== 'completed') throw new Error(`indexing job ended ${outcome.kind}`);
    }
    const chunks = await queryRows<StoredChunk>(
      db,
      sql`select id, doc_key as "docKey", text from kb_chunks
           where active and not superseded order by doc_key, chunk_index`,
    );
    lexical = new LexicalIndex(db, { log, maxStalenessMs: 0 });
    const index = lexical;
    const glossary = new Glossary(db);
    const searchWith = (tuning: Partial<SearchTuning>) =>
      new SearchService(db, embeddings, store, index, tuning, undefined, undefined, glossary);
    return {
      database,
      search: searchWith({}),
      embeddings,
      vectors: store,
      glossary,
      chunks,
      withTuning: searchWith,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
