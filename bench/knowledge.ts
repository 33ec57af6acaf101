import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { sql, type SQL } from 'drizzle-orm';
import { openDatabase, queryRows, type Database, type Db } from '../src/db/client.js';
import { runMigrations } from '../src/db/migrate.js';
import { kbChunks } from '../src/db/schema/index.js';
import { AuditService, SYSTEM_CONTEXT } from '../src/modules/audit/service.js';
import { expandAbbreviations } from '../src/modules/knowledge/abbreviations.js';
import { chunkPages } from '../src/modules/knowledge/chunk.js';
import type { SupportedType } from '../src/modules/knowledge/content-type.js';
import { DEFAULT_BUDGETS } from '../src/config-knowledge.js';
import { extractPages } from '../src/modules/knowledge/extract.js';
import { ExtractionPool } from '../src/modules/knowledge/extraction-pool.js';
import { searchTextOf } from '../src/modules/knowledge/extraction-protocol.js';
import { Indexer } from '../src/modules/knowledge/indexer.js';
import { jobStateCounter } from '../src/modules/knowledge/job-states.js';
import { SearchService } from '../src/modules/knowledge/search.js';
import { LexicalIndex } from '../src/modules/knowledge/lexical/index.js';
import { KnowledgeService, type StoredUpload } from '../src/modules/knowledge/service.js';
import type { SelfActor } from '../src/modules/users/service.js';
import { usersRepo } from '../src/modules/users/repo.js';
import { LocalDirectoryStore } from '../src/platform/file-store.js';
import { createLogger } from '../src/platform/logger.js';
import { createMetrics } from '../src/platform/metrics.js';
import { createEmbeddings, type EmbeddingsProvider } from '../src/providers/embeddings/index.js';
import { expansions, tokenize } from '../src/providers/embeddings/text.js';
import {
  createVectorStore,
  type VectorPoint,
  type VectorStore,
} from '../src/providers/vectorstore/index.js';
import { largePdf } from '../test/helpers/pdf.js';
import { ADMIN_DATABASE_URL, createDatabase } from './lib/fixtures.js';
import { searchCorpus } from './lib/guideline-corpus.js';
import {
  num,
  percentile,
  prng,
  runBenchmark,
  shuffled,
  table,
  writeSection,
} from './lib/sections.js';

/**
 * `make bench-knowledge` (issue 4): indexing throughput of a generated 200-page PDF through the
 * real pipeline (KnowledgeService.register of a stored upload, then Indexer.run), and hybrid
 * search latency over 20,000 chunks (SearchService.search, limit 5) against a bare full-text
 * query on the same data, interleaved in one run; on the embedded PGlite and on PostgreSQL (a
 * scratch database, dropped at the end). Writes the knowledge section of BENCHMARKS.md.
 * Knobs for quick trials: BENCH_CHUNKS (20000), BENCH_PAGES (200), BENCH_INDEX_RUNS (3),
 * BENCH_ROUNDS (search rounds over every query, 4), BENCH_PGLITE=0 / BENCH_POSTGRES=0 (skip a
 * backend), BENCH_WRITE=0 (do not touch BENCHMARKS.md).
 */

const settings = {
  chunks: num('BENCH_CHUNKS', 20_000),
  pages: num('BENCH_PAGES', 200),
  indexRuns: num('BENCH_INDEX_RUNS', 3),
  rounds: num('BENCH_ROUNDS', 4),
  pglite: process.env.BENCH_PGLITE !== '0',
  postgres: process.env.BENCH_POSTGRES !== '0',
  write: process.env.BENCH_WRITE !== '0',
};
const ROOT = path.resolve(import.meta.dirname, '..');
const QUESTIONS = path.join(ROOT, 'eval', 'questions.json');
/** As src/modules/knowledge/wiring.ts and the configuration's defaults. */
const INDEXER_OPTIONS = { leaseMs: 60_000, retryBaseMs: 5000, batchSize: 32, watchMs: 1000 };
const MAX_RETRIES = 3;
const VECTOR_MAX_STALENESS_MS = 1000;
const LIMIT = 5;
/** The service's candidates per ranking (HASHED_TUNING.candidates in search.ts). */
const CANDIDATES = 50;

interface Question {
  id: string;
  question: string;
}
const loadQuestions = () => JSON.parse(readFileSync(QUESTIONS, 'utf8')) as Question[];

// ---------------------------------------------------------------------------------------------
// The pipeline, wired as src/modules/knowledge/wiring.ts does (one extraction thread), with a
// timing wrapper around the vector store the indexer is given (bench instrumentation only).

class TimedVectors implements VectorStore {
  upsertMs = 0;
  constructor(private readonly inner: VectorStore) {}
  get kind() {
    return this.inner.kind;
  }
  ensureReady(dimensions: number, model: string) {
    return this.inner.ensureReady(dimensions, model);
  }
  async upsert(points: readonly VectorPoint[]) {
    const started = performance.now();
    try {
      await this.inner.upsert(points);
    } finally {
      this.upsertMs += performance.now() - started;
    }
  }
  search(vector: Float32Array, options: { limit: number; category?: string | undefined }) {
    return this.inner.search(vector, options);
  }
  deleteByDocument(documentId: string, options?: { exceptJobId?: string }) {
    return this.inner.deleteByDocument(documentId, options);
  }
  deleteByJob(jobId: string) {
    return this.inner.deleteByJob(jobId);
  }
  probe() {
    return this.inner.probe();
  }
  close() {
    return this.inner.close();
  }
}

/**
 * The database handle given to the Indexer, timing two of its statements in the real run: the
 * chunk rows' INSERTs (`documentsRepo.insertChunks`) and its transactions (the activation).
 */
class StatementTimer {
  insertMs = 0;
  transactionMs = 0;

  wrap(db: Db): Db {
    const insert = db.insert.bind(db);
    const transaction = db.transaction.bind(db);
    const timedInsert = ((table: Parameters<Db['insert']>[0]) => {
      const builder = insert(table);
      if (table !== kbChunks) return builder;
      const values = builder.values.bind(builder);
      builder.values = (rows: never) => {
        const query = values(rows);
        const then = query.then.bind(query);
        query.then = ((
          onFulfilled?: (v: unknown) => unknown,
          onRejected?: (e: unknown) => unknown,
        ) => {
          const started = performance.now();
          const stop = () => {
            this.insertMs += performance.now() - started;
          };
          return then(
            (v) => {
              stop();
              return onFulfilled === undefined ? v : onFulfilled(v);
            },
            (e: unknown) => {
              stop();
              if (onRejected === undefined) throw e;
              return onRejected(e);
            },
          );
        }) as typeof query.then;
        return query;
      };
      return builder;
    }) as Db['insert'];
    const timedTransaction = (async (...args: Parameters<Db['transaction']>) => {
      const started = performance.now();
      try {
        return await transaction(...args);
      } finally {
        this.transactionMs += performance.now() - started;
      }
    }) as Db['transaction'];
    return new Proxy(db, {
      get(target, prop, receiver) {
        if (prop === 'insert') return timedInsert;
        if (prop === 'transaction') return timedTransaction;
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
  }
}

interface Backend {
  key: 'pglite' | 'postgres';
  label: string;
  version: string;
  database: Database;
  db: Db;
  files: LocalDirectoryStore;
  embeddings: EmbeddingsProvider;
  pool: ExtractionPool;
  vectors: TimedVectors;
  statements: StatementTimer;
  indexer: Indexer;
  knowledge: KnowledgeService;
  search: SearchService;
  actor: SelfActor;
}

async function wire(key: Backend['key'], database: Database, dir: string): Promise<Backend> {
  const { db } = database;
  await runMigrations(database);
  const log = createLogger({ logLevel: 'warn' });
  const files = new LocalDirectoryStore(path.join(dir, 'files'));
  const embeddings = createEmbeddings({ provider: 'hashed' });
  const store = createVectorStore({
    kind: 'embedded',
    db,
    maxStalenessMs: VECTOR_MAX_STALENESS_MS,
  });
  const vectors = new TimedVectors(store);
  const statements = new StatementTimer();
  const states = jobStateCounter(createMetrics().kbJobs);
  const pool = new ExtractionPool({ threads: 1, maxHeapMb: 1024 });
  cleanups.push(() => pool.destroy());
  const indexer = new Indexer(
    {
      db: statements.wrap(db),
      files,
      embeddings,
      vectors,
      log,
      states,
      pool,
      budgets: DEFAULT_BUDGETS,
      embedInThreads: true,
    },
    INDEXER_OPTIONS,
  );
  const audit = new AuditService(db, () => new Date());
  // Jobs are run by the benchmark itself (Indexer.run, timed) rather than by the worker's queue.
  const sink = { enqueue: () => Promise.resolve() };
  const knowledge = new KnowledgeService(db, files, vectors, audit, sink, log, MAX_RETRIES, states);
  const lexical = new LexicalIndex(db, { log });
  const search = new SearchService(db, embeddings, store, lexical);
  const id = randomUUID();
  await usersRepo.insert(db, {
    id,
    email: `kb-admin.${id.slice(0, 8)}@example.org`,
    fullName: 'Knowledge Bench Admin',
    passwordHash: '!benchmark-no-login',
    adminRole: 'admin',
  });
  const [v] = await queryRows<{ v: string }>(
    db,
    sql`select current_setting('server_version') as v`,
  );
  return {
    key,
    label: key === 'pglite' ? 'PGlite (embedded)' : 'PostgreSQL',
    version: v?.v ?? '?',
    database,
    db,
    files,
    embeddings,
    pool,
    vectors,
    statements,
    indexer,
    knowledge,
    search,
    actor: { id, email: `kb-admin.${id.slice(0, 8)}@example.org` },
  };
}

/** What the upload route leaves behind: the bytes in the file store, described. */
async function storeUpload(
  b: Backend,
  bytes: Buffer,
  meta: { title: string; docKey: string; category: string; contentType: SupportedType },
): Promise<StoredUpload> {
  const documentId = randomUUID();
  const storageKey = `kb/${documentId}/original`;
  await b.files.put(storageKey, Readable.from([bytes]));
  return {
    documentId,
    storageKey,
    title: meta.title,
    category: meta.category,
    docKey: meta.docKey,
    filename: `${meta.docKey}${meta.contentType === 'application/pdf' ? '.pdf' : '.txt'}`,
    contentType: meta.contentType,
    sizeBytes: bytes.length,
    contentHash: createHash('sha256').update(bytes).digest('hex'),
  };
}

interface Indexed {
  documentId: string;
  pages: number;
  chunks: number;
  registerMs: number;
  runMs: number;
  upsertMs: number;
  /** The chunk rows' INSERTs and the activation transaction, timed in the run. */
  insertMs: number;
  activationMs: number;
}

/** KnowledgeService.register, then Indexer.run of its job; fails the run unless it completed. */
async function indexDocument(b: Backend, upload: StoredUpload): Promise<Indexed> {
  const t0 = performance.now();
  const registered = await b.knowledge.register(b.actor, upload, SYSTEM_CONTEXT);
  const t1 = performance.now();
  const job = registered.job;
  if (!registered.created || job === null) throw new Error(`${upload.docKey}: no job created`);
  const upsert0 = b.vectors.upsertMs;
  const insert0 = b.statements.insertMs;
  const activation0 = b.statements.transactionMs;
  const outcome = await b.indexer.run(job.id);
  const t2 = performance.now();
  const { document } = await b.knowledge.get(upload.documentId);
  if (outcome.kind !== 'completed' || document.status !== 'indexed') {
    throw new Error(`${upload.docKey}: ${outcome.kind}, status ${document.status}`);
  }
  return {
    documentId: document.id,
    pages: document.pageCount ?? 0,
    chunks: document.chunkCount,
    registerMs: t1 - t0,
    runMs: t2 - t1,
    upsertMs: b.vectors.upsertMs - upsert0,
    insertMs: b.statements.insertMs - insert0,
    activationMs: b.statements.transactionMs - activation0,
  };
}

// ---------------------------------------------------------------------------------------------
// Indexing: the 200-page PDF.

interface IndexRun extends Indexed {
  /** Replayed right after the run with the functions the indexer calls (see render). */
  extractMs: number;
  chunkMs: number;
  embedMs: number;
}

async function measureIndexing(b: Backend, pdf: Buffer, label: string): Promise<IndexRun[]> {
  const runs: IndexRun[] = [];
  // One untimed run first: pdf.js is imported on first use (~0.4 s) and the JIT warms up.
  for (let r = -1; r < settings.indexRuns; r++) {
    const title = `Hypertension in adults, full guideline (bench copy ${r + 2})`;
    const upload = await storeUpload(b, pdf, {
      title,
      docKey: `bench-large-pdf-${r + 2}`,
      category: 'guidelines',
      contentType: 'application/pdf',
    });
    const run = await indexDocument(b, upload);
    // Stage replay on the same bytes.
    let t = performance.now();
    const pages = await extractPages(pdf, 'application/pdf');
    const extractMs = performance.now() - t;
    t = performance.now();
    const chunks = chunkPages(pages);
    const chunkMs = performance.now() - t;
    t = performance.now();
    await b.embeddings.embed(chunks.map((chunk) => searchTextOf(title, chunk)));
    const embedMs = performance.now() - t;
    if (chunks.length !== run.chunks || pages.length !== run.pages) {
      throw new Error(
        `replay: ${pages.length} pages ${chunks.length} chunks, run ${run.pages}/${run.chunks}`,
      );
    }
    if (r < 0) {
      await b.knowledge.delete(b.actor, run.documentId, SYSTEM_CONTEXT);
      continue;
    }
    const result = { ...run, extractMs, chunkMs, embedMs };
    runs.push(result);
    console.log(
      `${label} index ${r + 1}/${settings.indexRuns}: ${run.pages} pages, ${run.chunks} chunks in ` +
        `${(run.runMs / 1000).toFixed(2)} s (${(run.pages / (run.runMs / 1000)).toFixed(1)} pages/s); ` +
        `extract ${extractMs.toFixed(0)} ms, chunk ${chunkMs.toFixed(0)} ms, embed ${embedMs.toFixed(0)} ms, ` +
        `chunk rows ${run.insertMs.toFixed(0)} ms, vectors ${run.upsertMs.toFixed(0)} ms, ` +
        `activation ${run.activationMs.toFixed(0)} ms`,
    );
  }
  return runs;
}

// ---------------------------------------------------------------------------------------------
// Seeding the search corpus through the same pipeline.

interface Seeded {
  documents: number;
  chunks: number;
  seconds: number;
  /** Indexer.run time only (registering excluded). */
  runSeconds: number;
  activeChunks: number;
  vectors: number;
}

async function seed(
  b: Backend,
  docs: { title: string; text: string }[],
  label: string,
): Promise<Seeded> {
  const started = performance.now();
  let chunks = 0;
  let runMs = 0;
  for (const [i, doc] of docs.entries()) {
    const upload = await storeUpload(b, Buffer.from(doc.text, 'utf8'), {
      title: doc.title,
      docKey: `generated-${String(i).padStart(4, '0')}`,
      category: i % 5 === 0 ? 'formulary' : 'guidelines',
      contentType: 'text/plain',
    });
    const indexed = await indexDocument(b, upload);
    chunks += indexed.chunks;
    runMs += indexed.runMs;
    if ((i + 1) % 50 === 0 || i === docs.length - 1) {
      const s = (performance.now() - started) / 1000;
      console.log(
        `${label} seeded ${i + 1}/${docs.length} documents, ${chunks} chunks, ${s.toFixed(0)} s`,
      );
    }
  }
  const seconds = (performance.now() - started) / 1000;
  await b.db.execute(sql`vacuum (analyze)`);
  const [counts] = await queryRows<{ active: number; vectors: number }>(
    b.db,
    sql`select (select count(*) from kb_chunks where active and not superseded)::int as active,
               (select count(*) from kb_vectors)::int as vectors`,
  );
  const activeChunks = counts?.active ?? 0;
  if (activeChunks !== chunks || counts?.vectors !== chunks) {
    throw new Error(`seeded ${chunks} chunks, ${activeChunks} active, ${counts?.vectors} vectors`);
  }
  return {
    documents: docs.length,
    chunks,
    seconds,
    runSeconds: runMs / 1000,
    activeChunks,
    vectors: counts.vectors,
  };
}

// ---------------------------------------------------------------------------------------------
// Search.

/** The service's OR query over the query's terms (as SearchService.lexical builds it). */
const orQuery = (q: string) =>
  sql`nullif(replace(plainto_tsquery('english', ${q})::text, '&', '|'), '')::tsquery`;

/**
 * The text the service's full-text half searches for a question: a copy of search.ts `prepare`
 * (private): abbreviations expanded, then the lexicon's clinical terms for lay words added.
 */
function lexicalText(question: string): string {
  const expanded = expandAbbreviations(question);
  const added = expansions(tokenize(expanded)).map((words) => words.join(' '));
  return [expanded, ...added].join(' ');
}

/**
 * A copy of SearchService's lexical statement (search.ts `lexicalRanking`, private).
 * `detoastOnce` is how the service does it since this benchmark measured it: the materialized
 * `hits` keep `tsv || ''` (a value) instead of `tsv` (a TOAST pointer), so the per-term join
 * reads each row's tsvector once instead of once per term; without it is the earlier statement,
 * kept for comparison. The ranking is the same; `prepareQueries` checks that the copy answers
 * what the service answers.
 */
function lexicalStatement(text: string, detoastOnce: boolean) {
  const tsv = detoastOnce ? sql`(c.tsv || ''::tsvector)` : sql`c.tsv`;
  return sql`with terms as (
          select distinct (
              '''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || ''''
            )::tsquery as t
            from unnest(tsvector_to_array(to_tsvector('english', ${text}))) as lexeme
        ),
        hits as materialized (
          select c.id, c.doc_key, c.chunk_index, ${tsv} as tsv from kb_chunks c
           where c.active and not c.superseded
             and c.tsv @@ nullif(replace(plainto_tsquery('english', ${text})::text, '&', '|'), '')::tsquery
        ),
        matched as (
          select h.id, h.doc_key, h.chunk_index, terms.t, ts_rank(h.tsv, terms.t, 0) as tf
            from hits h join terms on h.tsv @@ terms.t
        ),
        df as (select t, count(*)::float8 as n from matched group by t),
        total as (select count(*)::float8 as n from hits)
        select m.id from matched m join df using (t) cross join total
         group by m.id, m.doc_key, m.chunk_index
         order by sum(ln(1 + (total.n - df.n + 0.5) / (df.n + 0.5)) * m.tf) desc,
                  m.doc_key, m.chunk_index, m.id
         limit ${CANDIDATES}`;
}
const lexicalCopy = (db: Db, text: string, detoastOnce: boolean) =>
  queryRows<{ id: string }>(db, lexicalStatement(text, detoastOnce));

/** The baseline: one statement, the service's OR matching, PostgreSQL's own ranking, top 5. */
const bareOr = (text: string) =>
  sql`select id from kb_chunks, (select ${orQuery(text)} as q) x
       where active and not superseded and tsv @@ x.q
       order by ts_rank_cd(tsv, x.q) desc limit ${LIMIT}`;
/** The same with AND semantics (every word), as `websearch_to_tsquery` reads a question. */
const bareAnd = (text: string) =>
  sql`select id from kb_chunks, websearch_to_tsquery('english', ${text}) q
       where active and not superseded and tsv @@ q
       order by ts_rank_cd(tsv, q) desc limit ${LIMIT}`;

interface Query {
  id: string;
  question: string;
  /** What the service's full-text half searches (see lexicalText). */
  text: string;
  /** The chunk ids SearchService.search answers for it (for the passages read). */
  top: string[];
  orMatches: number;
  andMatches: number;
}

interface SearchTarget {
  name: string;
  run: (q: Query) => Promise<unknown>;
}

function searchTargets(b: Backend): SearchTarget[] {
  const { db, search } = b;
  return [
    { name: 'search', run: (q) => search.search(q.question, { limit: LIMIT }) },
    // Both prepare the question themselves, as search does.
    { name: 'lexical', run: (q) => search.lexical(q.question, undefined) },
    { name: 'dense', run: (q) => search.dense(q.question, undefined) },
    { name: 'lexical, detoast once', run: (q) => lexicalCopy(db, q.text, true) },
    { name: 'bare OR', run: (q) => db.execute(bareOr(q.text)) },
    { name: 'bare AND', run: (q) => db.execute(bareAnd(q.text)) },
    { name: 'passages', run: (q) => passages(db, q, true) },
    { name: 'passages, no ts_headline', run: (q) => passages(db, q, false) },
    { name: 'SELECT 1', run: () => db.execute(sql`select 1`) },
  ];
}

/** A copy of SearchService's (private) final read, optionally without its ts_headline snippet. */
function passages(db: Db, q: Query, headline: boolean) {
  if (q.top.length === 0) return db.execute(sql`select 1`);
  const snippet = headline
    ? sql`coalesce(ts_headline('english', c.text, ${orQuery(q.text)},
            'StartSel="",StopSel="",MaxWords=45,MinWords=20,MaxFragments=1'), left(c.text, 300))`
    : sql`left(c.text, 300)`;
  return db.execute(
    sql`select c.id as "chunkId", c.document_id as "documentId", c.doc_key as "docKey",
          d.title, c.version, c.page, c.heading, ${snippet} as snippet
        from kb_chunks c join kb_documents d on d.id = c.document_id
        where c.id in (${sql.join(
          q.top.map((id) => sql`${id}::uuid`),
          sql`, `,
        )}) and c.active and not c.superseded and d.superseded_by is null`,
  );
}

async function prepareQueries(b: Backend): Promise<{ queries: Query[]; copyMatches: boolean }> {
  const out: Query[] = [];
  let copyMatches = true;
  for (const { id, question } of loadQuestions()) {
    const text = lexicalText(question);
    const hits = await b.search.search(question, { limit: LIMIT });
    const service = await b.search.lexical(question, undefined);
    for (const detoastOnce of [false, true]) {
      const copy = (await lexicalCopy(b.db, text, detoastOnce)).map((r) => r.id);
      if (copy.join() !== service.join()) copyMatches = false;
    }
    const [m] = await queryRows<{ or: number; and: number }>(
      b.db,
      sql`select (select count(*) from kb_chunks, (select ${orQuery(text)} as q) x
                   where active and not superseded and tsv @@ x.q)::int as "or",
                 (select count(*) from kb_chunks, websearch_to_tsquery('english', ${text}) q
                   where active and not superseded and tsv @@ q)::int as "and"`,
    );
    out.push({
      id,
      question,
      text,
      top: hits.map((h) => h.chunkId),
      orMatches: m?.or ?? 0,
      andMatches: m?.and ?? 0,
    });
  }
  return { queries: out, copyMatches };
}

interface TargetResult {
  name: string;
  calls: number;
  p50: number;
  p99: number;
  mean: number;
  /** Per round: this target's p50 over that round's bare OR / bare AND p50. */
  perRoundOr: number[];
  perRoundAnd: number[];
}

interface SearchMeasured {
  queries: Query[];
  results: TargetResult[];
  copyMatches: boolean;
  typical: Query;
  plans: Plan[];
}

const sortedOf = (values: number[]) => Float64Array.from(values).sort();
const p50Of = (values: number[]) => percentile(sortedOf(values), 0.5);

/**
 * Every round runs every query (in a shuffled order) through every target (in a shuffled order,
 * one call at a time): the targets share whatever the machine does meanwhile, and none runs with
 * caches left warm by a stretch of its own calls. One untimed round first.
 */
async function measureSearch(b: Backend, queries: Query[], label: string): Promise<TargetResult[]> {
  const targets = searchTargets(b);
  const random = prng(42);
  const samples = targets.map(() => Array.from({ length: settings.rounds }, () => [] as number[]));
  for (let round = -1; round < settings.rounds; round++) {
    const started = performance.now();
    for (const q of shuffled(queries, random)) {
      for (const i of shuffled(
        targets.map((_, k) => k),
        random,
      )) {
        const t = performance.now();
        await targets[i]!.run(q);
        const elapsed = performance.now() - t;
        if (round >= 0) samples[i]![round]!.push(elapsed);
      }
    }
    const s = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `${label} search round ${round < 0 ? 'warm-up' : `${round + 1}/${settings.rounds}`}: ${s} s`,
    );
  }
  const idx = (name: string) => targets.findIndex((t) => t.name === name);
  const or = samples[idx('bare OR')]!;
  const and = samples[idx('bare AND')]!;
  return targets.map((t, i) => {
    const all = samples[i]!.flat();
    const sorted = sortedOf(all);
    return {
      name: t.name,
      calls: all.length,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      mean: all.reduce((a, v) => a + v, 0) / all.length,
      perRoundOr: samples[i]!.map((v, r) => p50Of(v) / p50Of(or[r]!)),
      perRoundAnd: samples[i]!.map((v, r) => p50Of(v) / p50Of(and[r]!)),
    };
  });
}

interface Plan {
  name: string;
  ms: number;
  /** Shared buffers hit or read by the whole statement (pages touched, TOAST included). */
  buffers: number;
  lines: string[];
}

/** EXPLAIN (ANALYZE, BUFFERS) of the lexical statement (as is and proposed) and the bare ones. */
async function explain(b: Backend, q: Query): Promise<Plan[]> {
  const plan = async (name: string, statement: SQL): Promise<Plan> => {
    const lines = (
      await queryRows<{ 'QUERY PLAN': string }>(
        b.db,
        sql`explain (analyze, buffers, costs off) ${statement}`,
      )
    ).map((r) => r['QUERY PLAN']);
    const top = lines.find((l) => l.trim().startsWith('Buffers:')) ?? '';
    const count = (what: string) => Number(new RegExp(`${what}=(\\d+)`).exec(top)?.[1] ?? 0);
    const time = lines.find((l) => l.startsWith('Execution Time')) ?? '';
    return {
      name,
      ms: Number(/([\d.]+) ms/.exec(time)?.[1] ?? Number.NaN),
      buffers: count('hit') + count('read'),
      lines,
    };
  };
  return [
    await plan('lexical, tsvector read per term (earlier)', lexicalStatement(q.text, false)),
    await plan('lexical, detoast once (the service now)', lexicalStatement(q.text, true)),
    await plan('bare OR', bareOr(q.text)),
    await plan('bare AND', bareAnd(q.text)),
  ];
}

// ---------------------------------------------------------------------------------------------
// Report.

interface BackendReport {
  key: Backend['key'];
  label: string;
  version: string;
  index: IndexRun[];
  seeded: Seeded;
  search: SearchMeasured;
}

const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const x = (v: number) => v.toFixed(2);
const median = (values: number[]) => p50Of(values);
const range = (values: number[]) => `${x(Math.min(...values))} to ${x(Math.max(...values))}`;

function indexTable(reports: BackendReport[]): string {
  const rows = reports.map((r) => {
    const m = (f: (run: IndexRun) => number) => median(r.index.map(f));
    const total = m((run) => run.runMs);
    const pages = r.index[0]?.pages ?? 0;
    const chunks = r.index[0]?.chunks ?? 0;
    const parts = {
      extract: m((run) => run.extractMs),
      chunk: m((run) => run.chunkMs),
      embed: m((run) => run.embedMs),
      insert: m((run) => run.insertMs),
      upsert: m((run) => run.upsertMs),
      activation: m((run) => run.activationMs),
    };
    const rest = total - Object.values(parts).reduce((a, v) => a + v, 0);
    const share = (v: number) => `${(v / 1000).toFixed(2)} (${((100 * v) / total).toFixed(0)}%)`;
    return [
      r.label,
      `${pages} / ${chunks}`,
      (total / 1000).toFixed(2),
      range(r.index.map((run) => run.runMs / 1000)),
      (pages / (total / 1000)).toFixed(1),
      (chunks / (total / 1000)).toFixed(0),
      share(parts.extract),
      share(parts.chunk),
      share(parts.embed),
      share(parts.insert),
      share(parts.upsert),
      share(parts.activation),
      share(rest),
      ms(m((run) => run.registerMs)),
    ];
  });
  return table(
    [
      'backend',
      'pages / chunks',
      'Indexer.run s (median)',
      'runs s',
      'pages/s',
      'chunks/s',
      'extraction s',
      'chunking s',
      'embedding s',
      'chunk rows s',
      'vectors s',
      'activation s',
      'rest s',
      'register ms',
    ],
    rows,
  );
}

const LABELS: Record<string, string> = {
  search: '**`SearchService.search(q, { limit: 5 })`**',
  lexical: '`SearchService.lexical` (full text alone, top 50)',
  dense: '`SearchService.dense` (embedding + vector search, top 50)',
  'lexical, detoast once': 'copy of the lexical statement (see below), top 50',
  'bare OR': '**bare OR query, top 5 (the baseline)**',
  'bare AND': 'bare AND query (`websearch_to_tsquery`), top 5',
  passages: 'final passages read (copy; 5 ids, `ts_headline`)',
  'passages, no ts_headline': 'the same with `left(text, 300)` instead',
  'SELECT 1': '`SELECT 1` (round trip)',
};

const find = (r: BackendReport, name: string) => r.search.results.find((t) => t.name === name)!;

function searchTable(r: BackendReport): string {
  const or = find(r, 'bare OR');
  const and = find(r, 'bare AND');
  return table(
    [
      'call',
      'calls',
      'p50 ms',
      'p99 ms',
      'mean ms',
      'p50 / bare OR',
      'per round',
      'p50 / bare AND',
    ],
    r.search.results.map((t) => [
      LABELS[t.name] ?? t.name,
      t.calls,
      ms(t.p50),
      ms(t.p99),
      ms(t.mean),
      x(t.p50 / or.p50),
      range(t.perRoundOr),
      x(t.p50 / and.p50),
    ]),
  );
}

function goalTable(reports: BackendReport[]): string {
  return table(
    [
      'backend',
      'search p50 ms',
      'bare OR p50 ms',
      'search / bare OR',
      'per round',
      'goal',
      'met',
      'bare AND p50 ms',
      'search / bare AND',
    ],
    reports.map((r) => {
      const s = find(r, 'search');
      const or = find(r, 'bare OR');
      const and = find(r, 'bare AND');
      const ratio = s.p50 / or.p50;
      return [
        r.label,
        ms(s.p50),
        ms(or.p50),
        `**${x(ratio)}**`,
        range(s.perRoundOr),
        '≤ 3',
        ratio <= 3 ? 'yes' : '**no**',
        ms(and.p50),
        x(s.p50 / and.p50),
      ];
    }),
  );
}

function matchesLine(r: BackendReport): string {
  const q = r.search.queries;
  const or = sortedOf(q.map((v) => v.orMatches));
  const and = sortedOf(q.map((v) => v.andMatches));
  const zero = q.filter((v) => v.andMatches === 0).length;
  const share = (100 * percentile(or, 0.5)) / r.seeded.activeChunks;
  return (
    `With OR, a question matches a median ${percentile(or, 0.5)} chunks (${share.toFixed(0)}% of ` +
    `them; max ${percentile(or, 1)}); with AND a median ${percentile(and, 0.5)} (max ` +
    `${percentile(and, 1)}; ${zero} of ${q.length} questions match nothing)`
  );
}

function planTable(r: BackendReport): string {
  return table(
    ['statement', 'execution ms', 'shared buffers'],
    r.search.plans.map((p) => [p.name, ms(p.ms), p.buffers]),
  );
}

function render(date: Date, load: number, reports: BackendReport[]): string {
  const when = date.toISOString().replace('T', ' ').slice(0, 16);
  const cpu = cpus()[0]?.model ?? '?';
  const first = reports[0];
  const pdfChunks = first?.index[0]?.chunks ?? 0;
  const seeded = (r: BackendReport) =>
    `${r.label}: ${r.seeded.documents} documents, ${r.seeded.chunks} chunks in ` +
    `${r.seeded.seconds.toFixed(0)} s, ${(r.seeded.chunks / r.seeded.seconds).toFixed(0)} chunks/s ` +
    `with registering (\`Indexer.run\` alone: ${(r.seeded.chunks / r.seeded.runSeconds).toFixed(0)} chunks/s)`;
  const proposal = reports.map((r) => {
    const [before, after] = r.search.plans;
    return (
      `${r.label}: ${ms(after?.ms ?? NaN)} ms instead of ${ms(before?.ms ?? NaN)} ms, ` +
      `${after?.buffers ?? '?'} shared buffers instead of ${before?.buffers ?? '?'} for the median question` +
      (r.search.copyMatches
        ? ''
        : ' (**the copy no longer answers what search.ts does: re-check**)')
    );
  });
  const headline = reports.map((r) => {
    const f = (name: string) => find(r, name).p50;
    return (
      `- ${r.label}: search ${ms(f('search'))} ms at p50 = full text ${ms(f('lexical'))} ms ` +
      `(and, ${r.key === 'postgres' ? 'concurrently on the pool' : 'one after the other in this thread'}, dense ${ms(f('dense'))} ms) ` +
      `+ passages ${ms(f('passages'))} ms (${ms(f('passages, no ts_headline'))} ms without \`ts_headline\`, ` +
      `round trip ${ms(f('SELECT 1'))} ms). The bare OR query: ${ms(f('bare OR'))} ms.`
    );
  });
  return `## Knowledge base: indexing and search (issue 4)

Written by \`bench/knowledge.ts\`; edit the script, not this section.

- Command: \`make bench-knowledge\` (\`npx tsx bench/knowledge.ts\`; \`make bench\` runs it too)
- Date: ${when} UTC
- Machine: ${cpu}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, load average
  ${load.toFixed(2)} at the start (other work was running: noisy); Node ${process.version};
  ${reports.map((r) => `${r.label} ${r.version}`).join(', ')}. PostgreSQL runs on the same
  machine, reached over TCP on 127.0.0.1 through the service's drizzle handle and \`pg\` pool (10
  connections), in a scratch database dropped at the end, default settings; PGlite runs in this
  process on a temporary directory (as the embedded default does under \`DATA_DIR\`). Only ratios
  within one run compare.
- Code: \`src/modules/knowledge/search.ts\` as in the working tree at the time (sha256
  ${searchSourceHash()}), with the idf-weighted full-text ranking.
- Pipeline: as \`src/modules/knowledge/wiring.ts\` wires it: offline hashed embeddings (768
  dimensions, the default), the embedded vector store (\`kb_vectors\` + in-memory index,
  staleness check every ${VECTOR_MAX_STALENESS_MS} ms, the default), a local-directory file
  store, batches of ${INDEXER_OPTIONS.batchSize} chunks. Each document is put in the file store
  as the upload route leaves it, registered with \`KnowledgeService.register\` (document, job and
  audit entry in one transaction), then its job run with \`Indexer.run\` by the benchmark (the
  worker's queue only calls that).

### Indexing a ${settings.pages}-page PDF

${indexTable(reports)}

The PDF is \`largePdf(${settings.pages})\` of \`test/helpers/pdf.ts\` (pdfkit; a numbered heading
and three paragraphs per page, about 1,500 characters), ${pdfChunks} chunks. Each backend indexes
it ${settings.indexRuns} times under new doc_keys, after one untimed run (pdf.js loads on first
use), into the knowledge base already holding the search corpus below; figures are medians.
pages/s and chunks/s are over \`Indexer.run\` (reading the original through to the chunks going
live); registering is apart. The split is instrumentation outside \`src/\`: vectors
(\`VectorStore.upsert\`), chunk rows (the \`INSERT\`s of \`documentsRepo.insertChunks\`) and
activation (the final transaction: \`swapChunks\`, which also brings the chunks into the partial
GIN index, and the document and job updates) are timed inside the real run, by wrappers around
the vector store and the database handle given to the \`Indexer\`; extraction
(\`extractPages\`), chunking (\`chunkPages\`) and embedding (the hashed embedder on each chunk's
search text), which the run does in an extraction thread, are the same functions replayed in this
thread on the same bytes right after each run; "rest" is the run minus all of those: reading the
original and handing it to the thread, job claim, progress updates and clean-ups.

### Search over ${first?.seeded.activeChunks ?? settings.chunks} chunks

${goalTable(reports)}

Goal (issue 4): search p50 at most 3 times the p50 of a bare full-text query on the same data.

What "bare" means here: one statement on the same handle, data and text (the question prepared as
the service prepares it for full text: abbreviations expanded, clinical terms of lay words added),
through the partial GIN index (\`where active and not superseded and tsv @@ q\`), ranked by
PostgreSQL's \`ts_rank_cd\`, top 5, ids only. The service's full-text half matches any term (OR),
so the goal is held to the **bare OR query**, which does the same matching with the simplest
ranking. The AND query (\`websearch_to_tsquery\`: every word) is shown as well, but it is not the
same work: whole questions match almost nothing with AND, so it costs an index probe and a round
trip, and no OR search over thousands of matches can come near it.

Data: ${reports.map(seeded).join('; ')}. The documents are text uploads recombined from the 12
guideline-style documents of \`eval/corpus\` (a title with region, kind, year and edition, then 8
to 14 sections, 70% from the document's own topic; sentences dropped, borrowed within the topic
and swapped at random; deterministic), indexed one after another through register +
\`Indexer.run\`, then \`VACUUM (ANALYZE)\`; every chunk is active, with its \`tsv\` and its
vector. Queries: the ${first?.search.queries.length ?? 0} questions of \`eval/questions.json\`
(lay terms, abbreviations, paraphrase). ${first === undefined ? '' : matchesLine(first)}.

Measure: every round runs every question (shuffled) through every call below (shuffled), one call
at a time, after one untimed round (which also loads the in-memory vector index); ${settings.rounds}
rounds. p50/p99 over all calls; "per round" is the range of the rounds' p50 ratios. \`lexical\` and
\`dense\` are the service's own methods; the passages rows are a copy of its private final read.
${reports
  .map(
    (r) => `
#### ${r.label}

${searchTable(r)}
`,
  )
  .join('')}
### Where the search's time goes, and what to change

${headline.join('\n')}

The full-text statement is the whole cost: the vectors (an in-memory scan) and the passages
(\`ts_headline\` on 5 rows) are a few milliseconds. A question's OR matches a large share of the
chunks, so PostgreSQL reads every chunk's \`tsv\` (a sequential scan: at that selectivity the plan
is right) and ranks every match; the bare OR query pays that too, which is why the ratio stays
small while the absolute time grows with the corpus.

The service's statement pays it once more per query term: \`hits\` is materialized with \`tsv\` as
stored, a TOAST pointer for most rows (the rows hold text, search text and tsvector, so the
tsvector is compressed or moved out of line), and the join with \`terms\` evaluates \`tsv @@ t\`
and \`ts_rank(tsv, t)\` for every (hit, term) pair, fetching and decompressing the tsvector again
each time. EXPLAIN (ANALYZE, BUFFERS) for the question with the median number of OR matches
("${first?.search.typical.question ?? ''}"), one execution each after the measured rounds: the
buffer counts (pages touched, TOAST included) are exact, the times only indicative:
${reports
  .map(
    (r) => `
${r.label}:

${planTable(r)}
`,
  )
  .join('')}
The change this benchmark led to in \`src/modules/knowledge/search.ts\` (\`lexicalRanking\`): in
\`hits\`, select \`(c.tsv || ''::tsvector) as tsv\` instead of \`c.tsv\`. The concatenation with
an empty tsvector is the same value, detoasted once into the materialized CTE instead of once per
query term; the ranking is unchanged (the benchmark checks that the statement returns exactly the
service's ids for every question). Against the earlier statement, measured in the same rounds
(EXPLAIN): ${proposal.join('; ')}.

Not worth changing for speed: the passages' \`ts_headline\` (about a millisecond for 5 rows), the
separate passages round trip, and the OR query itself (the baseline pays it too; matching fewer
rows, for example by dropping the question's most frequent terms from the match, would cut the
absolute time of both, but it changes recall, which is the retrieval work's call).`;
}

/** Ties the figures to the search code they measured (it is being tuned at the same time). */
function searchSourceHash(): string {
  const source = readFileSync(path.join(ROOT, 'src', 'modules', 'knowledge', 'search.ts'));
  return createHash('sha256').update(source).digest('hex').slice(0, 12);
}

// ---------------------------------------------------------------------------------------------

const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) {
    await fn().catch((err: unknown) => {
      console.error('clean-up step failed:', err);
    });
  }
}

async function runBackend(
  b: Backend,
  pdf: Buffer,
  docs: { title: string; text: string }[],
): Promise<BackendReport> {
  console.log(`${b.label}: seeding ${docs.length} documents`);
  const seeded = await seed(b, docs, b.key);
  const { queries, copyMatches } = await prepareQueries(b);
  if (!copyMatches)
    console.warn(`${b.key}: the lexical copy no longer answers what search.ts does`);
  const results = await measureSearch(b, queries, b.key);
  for (const t of results) {
    console.log(
      `${b.key}  ${t.name.padEnd(26)} p50 ${ms(t.p50).padStart(7)} ms  p99 ${ms(t.p99).padStart(7)} ms` +
        `  /bare OR ${x(t.perRoundOr.length > 0 ? median(t.perRoundOr) : Number.NaN)}`,
    );
  }
  const byMatches = [...queries].sort((a, c) => a.orMatches - c.orMatches);
  const typical = byMatches[Math.floor(byMatches.length / 2)]!;
  const plans = await explain(b, typical);
  for (const p of plans) {
    console.log(
      `${b.key} EXPLAIN ANALYZE ${p.name} ("${typical.question}"):\n  ${p.lines.join('\n  ')}`,
    );
  }
  // Indexing last, into the populated knowledge base (as in use); nothing is searched after it.
  const index = await measureIndexing(b, pdf, b.key);
  return {
    key: b.key,
    label: b.label,
    version: b.version,
    index,
    seeded,
    search: { queries, results, copyMatches, typical, plans },
  };
}

async function main(): Promise<void> {
  const date = new Date();
  const load = loadavg()[0] ?? 0;
  const dir = mkdtempSync(path.join(tmpdir(), 'mas-bench-kb-'));
  cleanups.push(async () => {
    rmSync(dir, { recursive: true, force: true });
    await Promise.resolve();
  });
  const pdf = await largePdf(settings.pages);
  const docs = searchCorpus(settings.chunks);
  console.log(
    `PDF: ${settings.pages} pages, ${(pdf.length / 1024).toFixed(0)} KiB; search corpus: ` +
      `${docs.length} documents, ${docs.reduce((a, d) => a + d.chunks, 0)} chunks`,
  );
  const reports: BackendReport[] = [];
  if (settings.pglite) {
    const database = await openDatabase({ pgliteDir: path.join(dir, 'pglite') });
    cleanups.push(() => database.close());
    reports.push(
      await runBackend(await wire('pglite', database, path.join(dir, 'lite')), pdf, docs),
    );
  }
  if (settings.postgres) {
    const created = await createDatabase();
    cleanups.push(() => created.drop());
    const database = await openDatabase({ url: created.url, poolSize: 10 });
    cleanups.push(() => database.close());
    reports.push(
      await runBackend(await wire('postgres', database, path.join(dir, 'pg')), pdf, docs),
    );
  }
  await writeSection('knowledge', render(date, load, reports), settings.write);
}

await runBenchmark(ADMIN_DATABASE_URL, main, cleanUp);
