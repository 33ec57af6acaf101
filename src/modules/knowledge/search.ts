import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.js';
import type { EmbeddingsProvider } from '../../providers/embeddings/types.js';
import {
  isHybridStore,
  type HybridVectorStore,
  type VectorStore,
} from '../../providers/vectorstore/types.js';
import { expansions, tokenize } from '../../providers/embeddings/text.js';
import type { CacheRegion, RegionOptions } from '../../platform/layered-cache.js';
import { expandAbbreviations } from './abbreviations.js';
import type { LexicalIndex } from './lexical/index.js';
import type { GlossaryEntry } from '../../providers/llm/types.js';
import type { Glossary } from './glossary.js';
import { queryTerms } from './lexical/analysis.js';
import { abortable } from '../../platform/abortable.js';

export interface SearchOptions {
  limit: number;
  category?: string | undefined;
  /**
   * Whether each result's snippet is cut around the query's terms (`ts_headline`, the costliest
   * part of the passages read); default true. Chat turns cite from the whole text and pass false:
   * their snippet is then the text's first 300 characters.
   */
  snippets?: boolean | undefined;
  /**
   * The query's glossary entries, when the caller reads them anyway (a chat turn gives them to
   * its model): the search waits for them instead of reading them a second time.
   */
  glossary?: Promise<readonly GlossaryEntry[]> | undefined;
}

/** A passage found for a query, with what a citation needs. */
export interface SearchResult {
  chunkId: string;
  documentId: string;
  docKey: string;
  title: string;
  version: number;
  page: number | null;
  heading: string | null;
  snippet: string;
  /** The chunk's whole text (what a model answers from; the HTTP search answers the snippet). */
  text: string;
  /**
   * Fused rank score, 0..1: 1 is first in both the lexical and the dense ranking. When Qdrant
   * fuses (KB_SEARCH_ENGINE=qdrant), by position alone: 1 for the first result, 1/2 for the
   * second, 1/n for the n-th.
   */
  score: number;
  /** Rank in each ranking; null when absent from it, and always null when Qdrant fuses them. */
  lexicalRank: number | null;
  denseRank: number | null;
}

/** A search result before its scores: what the passages read answers. */
type Passage = Omit<SearchResult, 'score' | 'lexicalRank' | 'denseRank'>;

/** How the two rankings are fused. */
export interface SearchTuning {
  /** How many candidates each ranking contributes to the fusion. */
  candidates: number;
  /** The reciprocal-rank-fusion constant: dampens the weight of the very first ranks. */
  rrfK: number;
  /** Each ranking's weight in the fusion: lexical, dense. */
  weights: readonly [number, number];
  /**
   * The statement timeout of the passages read (default PASSAGES_TIMEOUT_MS): a database that
   * cannot answer a primary-key read in that time fails the search instead of holding it. Null
   * where the database does not enforce one (PGlite ignores `statement_timeout`): the read is then
   * one statement, not a transaction that sets a bound nothing applies.
   */
  passagesTimeoutMs?: number | null;
}

/** A read of at most a hundred chunks by primary key takes milliseconds; this is a hang. */
export const PASSAGES_TIMEOUT_MS = 2000;

/**
 * For the offline hashed embedder, chosen on the dev questions of eval/ (see eval/README.md): its
 * vectors are a bag of words without term weights, weaker than the full-text ranking, so they
 * mostly reorder the full-text candidates and rarely bring in one of their own.
 */
export const HASHED_TUNING: Readonly<SearchTuning> = { candidates: 50, rrfK: 20, weights: [4, 1] };
/**
 * The `kb-search` cache region. Any change to the searchable corpus (a version made live, a
 * document deleted) can change the ranking of any query, since a new chunk may outrank old ones
 * and term weights are counted among the candidates: such a change empties the whole region.
 */
export const kbSearchRegion: RegionOptions<SearchResult[]> = {
  l1TtlMs: 60_000,
  l2TtlMs: 10 * 60_000,
  maxEntries: 2_000,
};
export const KB_SEARCH_PATTERN = 'kb-search:*';

/** Any other embedding model: plain reciprocal rank fusion (not evaluated here). */
export const DEFAULT_TUNING: Readonly<SearchTuning> = { candidates: 50, rrfK: 60, weights: [1, 1] };

/**
 * The cache key's corpus version when Qdrant ranks (no lexical index here whose state could lag
 * behind): results are kept until the region is emptied, which every corpus change does.
 */
const HYBRID_VERSION = 'qdrant-hybrid';

/**
 * Hybrid retrieval: BM25 over an inverted index (LexicalIndex, off the event loop) and dense
 * vectors, fused by weighted reciprocal rank. Queries are expanded with clinical abbreviations
 * first (and lay terms, for the lexical side; see `prepare` and `queryTerms`). Only active,
 * current chunks are ever returned: the final read goes through the database whatever the
 * indexes answered.
 *
 * With a hybrid vector store (KB_SEARCH_ENGINE=qdrant), both rankings run there in one request
 * (sparse BM25 vectors and dense vectors, fused by Qdrant's reciprocal rank fusion) and the
 * lexical index is never built; the passages are read from the database as above.
 */
export class SearchService {
  private readonly tuning: SearchTuning;
  /** Set when the vector store ranks by terms too and fuses (KB_SEARCH_ENGINE=qdrant). */
  private readonly hybrid: HybridVectorStore | undefined;

  constructor(
    private readonly db: Db,
    private readonly embeddings: EmbeddingsProvider,
    private readonly vectors: VectorStore,
    /** BM25 over the live chunks (ADR 0004). */
    private readonly lexicalIndex: LexicalIndex,
    tuning: Partial<SearchTuning> = {},
    /** Results by query; emptied whenever the searchable corpus changes (see `kbSearchRegion`). */
    private readonly cache?: CacheRegion<SearchResult[]>,
    /**
     * Where the passages read runs when its connections already carry its statement timeout
     * (`Database.withStatementTimeout`): then it is one statement, with no transaction around it.
     */
    private readonly boundedDb?: Db,
    /** The abbreviations and names the documents define: a query is searched with both forms. */
    private readonly glossary?: Glossary,
  ) {
    const base = embeddings.model.startsWith('hashed-') ? HASHED_TUNING : DEFAULT_TUNING;
    this.tuning = { ...base, ...tuning };
    this.hybrid = isHybridStore(vectors) ? vectors : undefined;
  }

  /**
   * The best passages for `query`. `signal` gives the search up: it rejects at once with the
   * signal's reason and its database statements are not waited for.
   */
  async search(
    query: string,
    options: SearchOptions,
    signal?: AbortSignal,
  ): Promise<SearchResult[]> {
    if (this.cache === undefined) return this.run(query, options, signal);
    // Keyed by the state of the corpus the index holds: an instance whose index has not caught up
    // with a change yet cannot store a result that later searches, caught up, would be given.
    // Qdrant ranking: no index here (`version()` would build it), a constant.
    const version = this.hybrid === undefined ? await this.lexicalIndex.version() : HYBRID_VERSION;
    const key = createHash('sha256')
      .update(
        JSON.stringify([
          version,
          query,
          options.limit,
          options.category ?? null,
          options.snippets ?? true,
        ]),
      )
      .digest('hex');
    const found = this.cache.get(key, () => this.run(query, options));
    return (await (signal === undefined ? found : abortable(found, signal))) ?? [];
  }

  private async run(
    asked: string,
    options: SearchOptions,
    signal?: AbortSignal,
  ): Promise<SearchResult[]> {
    const query = await this.withGlossary(asked, options.glossary);
    if (this.hybrid !== undefined) return this.runHybrid(this.hybrid, query, options, signal);
    const prepared = prepare(query);
    const [lexical, dense] = await Promise.all([
      this.lexicalIndex.search(query, this.tuning.candidates, options.category, signal),
      this.denseRanking(prepared.dense, options.category, signal),
    ]);
    signal?.throwIfAborted();
    const { rrfK, weights } = this.tuning;
    const fused = fuse([lexical, dense], rrfK, weights);
    // A few spare candidates: a dense hit the database no longer holds live (a vector store
    // lagging behind a reindex or a new version) is dropped without leaving the page short.
    const top = fused.slice(0, options.limit * 2);
    const rows = await this.passages(
      top.map((f) => f.id),
      prepared.lexical,
      options,
    );
    const byId = new Map(top.map((f) => [f.id, f]));
    const max = (weights[0] + weights[1]) / (rrfK + 1);
    return rows.map((row) => {
      const f = byId.get(row.chunkId);
      return {
        ...row,
        score: Math.min(1, (f?.score ?? 0) / max),
        lexicalRank: f?.ranks[0] ?? null,
        denseRank: f?.ranks[1] ?? null,
      };
    });
  }

  /**
   * The query with what the knowledge base's documents define for the words it writes: the other
   * name of a pair ("Zestril": lisinopril, and the other way) and the abbreviation of a long form it
   * spells out ("latent TB infection": LTBI), so that it finds the documents that write only that
   * form. Not an abbreviation's long form: its common words dilute the ranking (measured with
   * eval/retrieval.ts: MRR 0.756 -> 0.744), as they did in the chunks' search text. Unchanged when
   * the glossary cannot be read.
   */
  private async withGlossary(
    query: string,
    given: Promise<readonly GlossaryEntry[]> | undefined,
  ): Promise<string> {
    if (this.glossary === undefined) return query;
    const entries = await (given ?? this.glossary.for(query)).catch(() => []);
    const lower = query.toLowerCase();
    const added = entries
      .flatMap((e) => (e.kind === 'name' ? [e.term, e.means] : [e.term]))
      .filter((form) => !lower.includes(form.toLowerCase()));
    return added.length === 0 ? query : `${query} ${[...new Set(added)].join(' ')}`;
  }

  /**
   * Both rankings and their fusion in the hybrid store: the question's terms (analysed as the
   * lexical index analyses them) and its dense vector go in one request, with as many candidates
   * from each as here and the same spare results. Qdrant answers the fused order only, so the
   * ranks in each ranking are unknown (null) and the score is by position.
   */
  private async runHybrid(
    store: HybridVectorStore,
    query: string,
    options: SearchOptions,
    signal?: AbortSignal,
  ): Promise<SearchResult[]> {
    const prepared = prepare(query);
    const [vector] = await this.embeddings.embed([prepared.dense], signal ? { signal } : {});
    if (vector === undefined) return [];
    await store.ensureReady(this.embeddings.dimensions, this.embeddings.model);
    const ids = await store.hybridSearch({
      terms: queryTerms(query),
      vector,
      candidates: this.tuning.candidates,
      limit: options.limit * 2,
      category: options.category,
      signal,
    });
    signal?.throwIfAborted();
    const rows = await this.passages(ids, prepared.lexical, options);
    return rows.map((row, i) => ({
      ...row,
      score: 1 / (i + 1),
      lexicalRank: null,
      denseRank: null,
    }));
  }

  /** Chunk ids by BM25 alone, best first (the query is prepared as `search` does). */
  lexical(query: string, category: string | undefined): Promise<string[]> {
    return this.lexicalIndex.search(query, this.tuning.candidates, category);
  }

  /** Chunk ids by vector similarity alone, best first (the query is prepared as `search` does). */
  dense(query: string, category: string | undefined): Promise<string[]> {
    return this.denseRanking(prepare(query).dense, category);
  }

  private async denseRanking(
    text: string,
    category: string | undefined,
    signal?: AbortSignal,
  ): Promise<string[]> {
    const [vector] = await this.embeddings.embed([text]);
    if (vector === undefined) return [];
    // Cheap once ready; before this process has indexed anything the store is not, and would throw.
    await this.vectors.ensureReady(this.embeddings.dimensions, this.embeddings.model);
    const limit = this.tuning.candidates;
    const hits = await this.vectors.search(vector, { limit, category, signal });
    return hits.map((h) => h.id);
  }

  /**
   * The first `limit` live chunks among `ids` (best first), in that order, with their document,
   * text and snippet. One statement: the chunks are found by primary key first (a materialised
   * step, so no statistics can turn it into a scan of every document), then their documents; the
   * snippet is cut (`ts_headline`) for the returned rows only.
   */
  private async passages(
    ids: readonly string[],
    query: string,
    options: SearchOptions,
  ): Promise<Passage[]> {
    if (ids.length === 0 || options.limit <= 0) return [];
    const snippet =
      options.snippets === false
        ? sql`left(text, 300)`
        : sql`coalesce(ts_headline('english', text,
            nullif(replace(plainto_tsquery('english', ${query})::text, '&', '|'), '')::tsquery,
            'StartSel="",StopSel="",MaxWords=45,MinWords=20,MaxFragments=1'), left(text, 300))`;
    // Chunk ids are uuids of this service's own rows (or the hybrid store's copies of them): as
    // one array parameter, a malformed one fails the cast, as it did one by one.
    const read = (db: Db) =>
      queryRows<Passage>(
        db,
        sql`with wanted as materialized (
            select k.id, k.document_id, k.doc_key, k.version, k.page, k.heading, k.text, r.ord
            from unnest(${`{${ids.join(',')}}`}::uuid[]) with ordinality as r (id, ord)
            join kb_chunks k on k.id = r.id
            where k.active and not k.superseded
          ), live as (
            select w.*, d.title, row_number() over (order by w.ord) as n
            from wanted w join kb_documents d on d.id = w.document_id
            where d.superseded_by is null
          )
          select id as "chunkId", document_id as "documentId", doc_key as "docKey", title,
            version, page, heading, text, ${snippet} as snippet
          from live where n <= ${options.limit} order by n`,
      );
    const { passagesTimeoutMs } = this.tuning;
    if (passagesTimeoutMs === null) return read(this.db);
    if (this.boundedDb !== undefined) return read(this.boundedDb);
    return this.db.transaction(async (tx) => {
      // `set local`: the bound ends with this transaction, whichever pooled connection it ran on.
      const ms = Math.round(passagesTimeoutMs ?? PASSAGES_TIMEOUT_MS);
      await tx.execute(sql.raw(`set local statement_timeout = ${String(ms)}`));
      return read(tx);
    });
  }
}

/**
 * What each ranking reads. Both: clinical abbreviations expanded ("HTN" adds "hypertension").
 * Full text also: the clinical terms of lay words ("blood thinner" adds "anticoagulant"), from the
 * lexicon the hashed embedder applies to both sides itself; documents are not expanded, so this
 * is what lets a lay question match clinical prose.
 */
function prepare(query: string): { lexical: string; dense: string } {
  const expanded = expandAbbreviations(query);
  const added = expansions(tokenize(expanded)).map((words) => words.join(' '));
  return { lexical: [expanded, ...added].join(' '), dense: expanded };
}

/** Reciprocal rank fusion of several rankings (best first), with each id's rank in each. */
export function fuse(
  rankings: readonly (readonly string[])[],
  k: number = DEFAULT_TUNING.rrfK,
  weights: readonly number[] = DEFAULT_TUNING.weights,
) {
  const fused = new Map<string, { id: string; score: number; ranks: (number | null)[] }>();
  rankings.forEach((ranking, which) => {
    ranking.forEach((id, i) => {
      const entry = fused.get(id) ?? { id, score: 0, ranks: rankings.map(() => null) };
      entry.score += (weights[which] ?? 1) / (k + i + 1);
      entry.ranks[which] = i + 1;
      fused.set(id, entry);
    });
  });
  // Ties (common: rank i in one list against rank i in the other) go to the earlier rankings.
  const rankOf = (entry: { ranks: (number | null)[] }, which: number) =>
    entry.ranks[which] ?? Number.MAX_SAFE_INTEGER;
  return [...fused.values()].sort((a, b) => {
    if (b.score !== a.score) return b.score - a.score;
    for (let which = 0; which < rankings.length; which += 1) {
      const d = rankOf(a, which) - rankOf(b, which);
      if (d !== 0) return d;
    }
    return a.id.localeCompare(b.id);
  });
}
