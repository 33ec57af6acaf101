import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { create, insertMultiple, search as oramaSearch } from '@orama/orama';
import { Encoder, Index } from 'flexsearch';
import MiniSearch from 'minisearch';
import pg from 'pg';
import bm25 from 'wink-bm25-text-search';
import { B, K1, Postings } from '../../src/modules/knowledge/lexical/postings.js';

/** A chunk as every candidate is given it: its id and its analysed terms (see analysis.ts). */
export interface Chunk {
  id: number;
  terms: string[];
  /** The terms joined by single spaces, for libraries that take text and a tokenizer. */
  text: string;
}

export interface Candidate {
  /** Builds the index over all chunks; may report the parts of the build separately. */
  build(chunks: readonly Chunk[]): Promise<Record<string, number>>;
  /** Chunk ids of the top `k` for a question's distinct terms, best first. */
  search(terms: readonly string[], k: number): Promise<number[]> | number[];
  /** Sizes the candidate knows of itself (bytes on disk, relation sizes...). */
  describe?(): Promise<Record<string, number | string>>;
  close?(): Promise<void>;
}

const split = (s: string) => s.split(' ');
const timed = async (fn: () => unknown) => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};

function ownExhaustive(): Candidate {
  let index: Postings | undefined;
  return {
    build: (chunks) => {
      index = new Postings(chunks.map((c) => c.terms));
      return Promise.resolve({});
    },
    search: (terms, k) => index!.exhaustive(terms, k),
    describe: () => Promise.resolve({ terms: index!.terms, typedBytes: index!.bytes }),
  };
}

function ownTopK(): Candidate {
  let index: Postings | undefined;
  return {
    build: (chunks) => {
      index = new Postings(chunks.map((c) => c.terms));
      return Promise.resolve({});
    },
    search: (terms, k) => index!.topK(terms, k),
    describe: () => Promise.resolve({ terms: index!.terms, typedBytes: index!.bytes }),
  };
}

function minisearch(): Candidate {
  const index = new MiniSearch<{ id: number; t: string }>({
    fields: ['t'],
    idField: 'id',
    tokenize: split,
    processTerm: (term) => term,
    searchOptions: {
      combineWith: 'OR',
      prefix: false,
      fuzzy: false,
      // BM25 as the reference computes it (MiniSearch's default is BM25+, d = 0.5, b = 0.7).
      bm25: { k: K1, b: B, d: 0 },
    },
  });
  return {
    build: (chunks) => {
      index.addAll(chunks.map((c) => ({ id: c.id, t: c.text })));
      return Promise.resolve({});
    },
    search: (terms, k) =>
      index
        .search(terms.join(' '))
        .slice(0, k)
        .map((r) => r.id as number),
  };
}

function orama(): Candidate {
  const db = create({
    schema: { t: 'string' } as const,
    components: {
      tokenizer: { language: 'english', normalizationCache: new Map(), tokenize: split },
    },
  });
  return {
    build: async (chunks) => {
      await insertMultiple(
        db,
        chunks.map((c) => ({ id: String(c.id), t: c.text })),
        1000,
      );
      return {};
    },
    search: async (terms, k) => {
      const found = await oramaSearch(db, {
        term: terms.join(' '),
        properties: ['t'],
        limit: k,
        threshold: 1, // any term (OR)
        tolerance: 0,
        relevance: { k: K1, b: B, d: 0 },
      });
      return found.hits.map((h) => Number(h.id));
    },
  };
}

function wink(): Candidate {
  const engine = bm25();
  engine.defineConfig({ fldWeights: { t: 1 }, bm25Params: { k1: K1, b: B, k: 1 } });
  engine.definePrepTasks([split]);
  return {
    build: (chunks) => {
      for (const c of chunks) engine.addDoc({ t: c.text }, c.id);
      engine.consolidate(4);
      return Promise.resolve({});
    },
    search: (terms, k) => engine.search(terms.join(' '), k).map(([id]) => Number(id)),
  };
}

function flexsearch(): Candidate {
  const index = new Index({
    tokenize: 'strict',
    resolution: 9,
    encoder: new Encoder({ split: ' ', normalize: false, dedupe: false, numeric: false }),
  });
  return {
    build: (chunks) => {
      for (const c of chunks) index.add(c.id, c.text);
      return Promise.resolve({});
    },
    // suggest: chunks matching only some of the terms too (OR); without it, every term (AND).
    search: (terms, k) => index.search(terms.join(' '), { limit: k, suggest: true }) as number[],
  };
}

function lance(): Candidate {
  const dir = mkdtempSync(path.join(tmpdir(), 'lexbench-lance-'));
  let table: lancedb.Table | undefined;
  let connection: lancedb.Connection | undefined;
  return {
    build: async (chunks) => {
      connection = await lancedb.connect(dir);
      const rows = chunks.map((c) => ({ id: c.id, text: c.text }));
      const t = connection;
      const createMs = await timed(async () => {
        table = await t.createTable('chunks', rows);
      });
      const indexMs = await timed(() =>
        table!.createIndex('text', {
          config: lancedb.Index.fts({
            baseTokenizer: 'whitespace',
            lowercase: false,
            stem: false,
            removeStopWords: false,
            asciiFolding: false,
            withPosition: false,
          }),
        }),
      );
      return { 'table ms': createMs, 'FTS index ms': indexMs };
    },
    search: async (terms, k) => {
      const rows = await table!
        .query()
        .fullTextSearch(terms.join(' '))
        .select(['id', '_score'])
        .limit(k)
        .toArray();
      return (rows as { id: number }[]).map((r) => r.id);
    },
    describe: () => {
      const du = execFileSync('du', ['-sb', dir], { encoding: 'utf8' });
      return Promise.resolve({ diskBytes: Number(du.split('\t')[0]) });
    },
    close: async () => {
      table?.close();
      connection?.close();
      rmSync(dir, { recursive: true, force: true });
      await Promise.resolve();
    },
  };
}

/** A tsquery of any of the terms (they are [a-z0-9]+, quoted all the same). */
const anyOf = (terms: readonly string[]) => terms.map((t) => `'${t}'`).join(' | ');

function rum(databaseUrl: string): Candidate {
  // 16 connections: one for the sequential measure, all for the 16 clients.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 16 });
  return {
    build: async (chunks) => {
      await pool.query('create extension if not exists rum');
      await pool.query('create table chunks (id int primary key, tsv tsvector not null)');
      const insertMs = await timed(async () => {
        for (let i = 0; i < chunks.length; i += 5000) {
          const batch = chunks.slice(i, i + 5000);
          await pool.query(
            `insert into chunks (id, tsv)
             select id, to_tsvector('simple', text) from unnest($1::int[], $2::text[]) as u(id, text)`,
            [batch.map((c) => c.id), batch.map((c) => c.text)],
          );
        }
      });
      const indexMs = await timed(() =>
        pool.query('create index chunks_rum on chunks using rum (tsv rum_tsvector_ops)'),
      );
      await pool.query('vacuum analyze chunks');
      return { 'rows ms': insertMs, 'RUM index ms': indexMs };
    },
    search: async (terms, k) => {
      const res = await pool.query<{ id: number }>(
        `select id from chunks where tsv @@ $1::tsquery order by tsv <=> $1::tsquery limit $2`,
        [anyOf(terms), k],
      );
      return res.rows.map((r) => r.id);
    },
    describe: async () => {
      const res = await pool.query<{ index: string; table: string; plan: string }>(
        `select pg_relation_size('chunks_rum')::text as index,
                pg_total_relation_size('chunks')::text as table`,
      );
      const row = res.rows[0]!;
      return { indexBytes: Number(row.index), tableBytes: Number(row.table) };
    },
    close: () => pool.end(),
  };
}

/** Ordered as they are run and reported. */
export const CANDIDATES = {
  'own-exhaustive': {
    label: 'own postings, every match scored (exact BM25: the reference)',
    make: ownExhaustive,
  },
  'own-maxscore': {
    label: 'own postings, block-max MaxScore top k',
    make: ownTopK,
  },
  minisearch: { label: 'minisearch 7.2.0', make: minisearch },
  orama: { label: '@orama/orama 3.1.18', make: orama },
  wink: { label: 'wink-bm25-text-search 3.1.2', make: wink },
  flexsearch: { label: 'flexsearch 0.8.212 (suggest: OR)', make: flexsearch },
  lancedb: { label: '@lancedb/lancedb 0.31.0 FTS (temp dir)', make: lance },
  rum: { label: 'PostgreSQL 15 + RUM (`tsv <=> q`)', make: rum },
} satisfies Record<string, { label: string; make: (databaseUrl: string) => Candidate }>;

export type CandidateKey = keyof typeof CANDIDATES;
