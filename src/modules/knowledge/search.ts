import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.js';
import type { EmbeddingsProvider } from '../../providers/embeddings/types.js';
import type { VectorStore } from '../../providers/vectorstore/types.js';
import { expandAbbreviations } from './abbreviations.js';

export interface SearchOptions {
  limit: number;
  category?: string | undefined;
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
  /** Fused rank score, 0..1: 1 is first in both the lexical and the dense ranking. */
  score: number;
  lexicalRank: number | null;
  denseRank: number | null;
}

/** How many candidates each ranking contributes to the fusion. */
const CANDIDATES = 50;
/** The reciprocal-rank-fusion constant: dampens the weight of the very first ranks. */
const RRF_K = 60;

/**
 * Hybrid retrieval: PostgreSQL full-text ranking and dense vectors, fused by reciprocal rank.
 * Queries are expanded with clinical abbreviations first. Only active, current chunks are ever
 * returned: the final read goes through the database whatever the vector store answered.
 */
export class SearchService {
  constructor(
    private readonly db: Db,
    private readonly embeddings: EmbeddingsProvider,
    private readonly vectors: VectorStore,
  ) {}

  async search(query: string, options: SearchOptions): Promise<SearchResult[]> {
    const expanded = expandAbbreviations(query);
    const [lexical, dense] = await Promise.all([
      this.lexical(expanded, options.category),
      this.dense(expanded, options.category),
    ]);
    const fused = fuse([lexical, dense]);
    const top = fused.slice(0, options.limit);
    const rows = await this.passages(
      top.map((f) => f.id),
      expanded,
    );
    const max = 2 / (RRF_K + 1);
    return top.flatMap((f) => {
      const row = rows.get(f.id);
      if (row === undefined) return [];
      return [
        {
          ...row,
          score: Math.min(1, f.score / max),
          lexicalRank: f.ranks[0] ?? null,
          denseRank: f.ranks[1] ?? null,
        },
      ];
    });
  }

  /** Chunk ids by full-text rank: any query term may match (OR), ranked by cover density. */
  async lexical(query: string, category: string | undefined): Promise<string[]> {
    const rows = await queryRows<{ id: string }>(
      this.db,
      sql`with q as (
          select nullif(replace(plainto_tsquery('english', ${query})::text, '&', '|'), '')::tsquery as q
        )
        select c.id from kb_chunks c, q
         where c.active and not c.superseded and c.tsv @@ q.q
           ${category === undefined ? sql`` : sql`and c.category = ${category}`}
         order by ts_rank_cd(c.tsv, q.q, 32) desc, c.id
         limit ${CANDIDATES}`,
    );
    return rows.map((r) => r.id);
  }

  async dense(query: string, category: string | undefined): Promise<string[]> {
    const [vector] = await this.embeddings.embed([query]);
    if (vector === undefined) return [];
    const hits = await this.vectors.search(vector, { limit: CANDIDATES, category });
    return hits.map((h) => h.id);
  }

  /** The live chunks among `ids`, with their document and a snippet around the query terms. */
  private async passages(ids: readonly string[], query: string) {
    if (ids.length === 0)
      return new Map<string, Omit<SearchResult, 'score' | 'lexicalRank' | 'denseRank'>>();
    const rows = await queryRows<Omit<SearchResult, 'score' | 'lexicalRank' | 'denseRank'>>(
      this.db,
      sql`select c.id as "chunkId", c.document_id as "documentId", c.doc_key as "docKey",
          d.title, c.version, c.page, c.heading,
          coalesce(ts_headline('english', c.text,
            nullif(replace(plainto_tsquery('english', ${query})::text, '&', '|'), '')::tsquery,
            'StartSel="",StopSel="",MaxWords=45,MinWords=20,MaxFragments=1'), left(c.text, 300)) as snippet
        from kb_chunks c join kb_documents d on d.id = c.document_id
        where c.id in (${sql.join(
          ids.map((id) => sql`${id}::uuid`),
          sql`, `,
        )}) and c.active and not c.superseded and d.superseded_by is null`,
    );
    return new Map(rows.map((r) => [r.chunkId, r]));
  }
}

/** Reciprocal rank fusion of several rankings (best first), with each id's rank in each. */
export function fuse(rankings: readonly (readonly string[])[]) {
  const fused = new Map<string, { id: string; score: number; ranks: (number | null)[] }>();
  rankings.forEach((ranking, which) => {
    ranking.forEach((id, i) => {
      const entry = fused.get(id) ?? { id, score: 0, ranks: rankings.map(() => null) };
      entry.score += 1 / (RRF_K + i + 1);
      entry.ranks[which] = i + 1;
      fused.set(id, entry);
    });
  });
  return [...fused.values()].sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}
