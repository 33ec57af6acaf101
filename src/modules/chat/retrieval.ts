import type { SearchService } from '../knowledge/search.js';
import type { GlossaryEntry, Passage } from '../../providers/llm/types.js';

export interface RetrieveOptions {
  limit: number;
  /** The number of the first passage: after a turn's earlier retrievals, the next free one. */
  startAt?: number;
  category?: string | undefined;
  /** The question's glossary entries, being read by the turn (see `SearchOptions.glossary`). */
  glossary?: Promise<readonly GlossaryEntry[]> | undefined;
}

/**
 * The knowledge-base passages for a question, best first, numbered for the model from `startAt`
 * (1 unless the turn already holds passages), each with its chunk's whole text: what the model
 * answers from and cites as `[n]`.
 */
export async function retrievePassages(
  search: SearchService,
  query: string,
  options: RetrieveOptions,
  signal?: AbortSignal,
): Promise<Passage[]> {
  const start = options.startAt ?? 1;
  const results = await search.search(
    query,
    {
      limit: options.limit,
      category: options.category,
      snippets: false,
      glossary: options.glossary,
    },
    signal,
  );
  return results.map((r, i) => ({
    n: start + i,
    chunkId: r.chunkId,
    documentId: r.documentId,
    docKey: r.docKey,
    title: r.title,
    version: r.version,
    page: r.page,
    heading: r.heading,
    text: r.text,
    score: r.score,
  }));
}
