/* eslint-disable @typescript-eslint/no-non-null-assertion -- per-ordinal arrays are grown with
   the ordinals they are indexed by. */
import { Postings, type Bm25Parameters, type CollectionStats } from './postings.js';

/**
 * The service's BM25: Lucene's k1, and no length normalisation (b = 0). The chunker cuts passages
 * to a bounded length already, so normalising mostly penalised a chunk for the title and heading
 * terms its search text carries. Tuned on the retrieval `dev` split (eval/retrieval.ts, 2026-11-27):
 * b 0.75, 0.5, 0.3, 0.1, 0 gave hybrid MRR 0.728, 0.739, 0.768, 0.793, 0.803, recall@5 0.917 for all;
 * k1 0.9 and 2.0 at b = 0 moved it by less than one question (0.813, 0.810), so k1 stays Lucene's.
 */
export const SERVICE_BM25: Readonly<Bm25Parameters> = { k1: 1.2, b: 0 };

/** One searchable chunk as the index holds it. */
export interface LexicalChunk {
  id: string;
  documentId: string;
  jobId: string;
  category: string;
  /** Its analysed terms, in order (see `analyse`). */
  terms: readonly string[];
}

/** What an index holds, for the operator figures and BENCHMARKS. */
export interface LexicalStats {
  chunks: number;
  removed: number;
  delta: number;
  terms: number;
  /** Typed arrays of the postings (dictionary strings and chunk ids apart; the delta as last built). */
  postingBytes: number;
}

/**
 * The lexical index of the live chunks: one large segment built at once, a small delta segment of
 * the chunks added since, rebuilt on each addition, and a removed flag per chunk that searches
 * skip. The delta scores with the collection's statistics (its own plus the main segment's), the
 * main segment with its own as built: the two agree up to the delta's share, which the owner
 * keeps small by building everything again (`needsRebuild`).
 *
 * Chunk ordinals run over both segments: the main segment's first, then the delta's.
 */
export class LexicalSegments {
  private main: Postings;
  /** Built from `deltaTerms` when a search or the figures need it (null: not since the last add). */
  private delta: Postings | null = null;
  private readonly deltaTerms: (readonly string[])[] = [];
  private readonly ids: string[] = [];
  private readonly jobs: string[] = [];
  private readonly ordinalOf = new Map<string, number>();
  private readonly byDocument = new Map<string, number[]>();
  private readonly categories = new Map<string, number>();
  private categoryOf = new Uint16Array(0);
  private removedFlag = new Uint8Array(0);
  private removedCount = 0;
  /** One string per distinct document, job or category id: chunks share them. */
  private readonly interned = new Map<string, string>();

  constructor(chunks: readonly LexicalChunk[]) {
    this.grow(chunks.length);
    const terms: (readonly string[])[] = [];
    for (const chunk of chunks) {
      if (this.ordinalOf.has(chunk.id)) continue;
      this.place(chunk);
      terms.push(chunk.terms);
    }
    this.main = new Postings(terms, undefined, SERVICE_BM25);
  }

  get size(): number {
    return this.ids.length - this.removedCount;
  }

  stats(): LexicalStats {
    return {
      chunks: this.size,
      removed: this.removedCount,
      delta: this.deltaTerms.length,
      terms: this.main.terms + (this.delta?.terms ?? 0),
      postingBytes:
        this.main.bytes +
        (this.delta?.bytes ?? 0) +
        this.categoryOf.byteLength +
        this.removedFlag.byteLength,
    };
  }

  /**
   * True when the delta or the removed chunks have grown past a share of the index at which the
   * statistics drift or the skipped postings cost more than a rebuild from the database.
   */
  needsRebuild(): boolean {
    const total = this.ids.length;
    return (
      (this.deltaTerms.length > 2000 && this.deltaTerms.length * 10 > total) ||
      (this.removedCount > 2000 && this.removedCount * 5 > total)
    );
  }

  /** Adds chunks to the delta segment; a chunk already held (live) is left as it is. */
  add(chunks: readonly LexicalChunk[]): number {
    let added = 0;
    this.grow(this.ids.length + chunks.length);
    for (const chunk of chunks) {
      if (this.ordinalOf.has(chunk.id)) continue;
      this.place(chunk);
      this.deltaTerms.push(chunk.terms);
      added += 1;
    }
    // Built once for a job's pages added one after another, by the next search.
    if (added > 0) this.delta = null;
    return added;
  }

  /** Removes the document's chunks, except those written by `keepJobId`; answers how many. */
  removeDocument(documentId: string, keepJobId: string | null): number {
    const ordinals = this.byDocument.get(documentId);
    if (ordinals === undefined) return 0;
    const kept: number[] = [];
    let removed = 0;
    for (const ordinal of ordinals) {
      if (this.jobs[ordinal] === keepJobId) {
        kept.push(ordinal);
        continue;
      }
      this.removedFlag[ordinal] = 1;
      this.ordinalOf.delete(this.ids[ordinal]!);
      removed += 1;
    }
    this.removedCount += removed;
    if (kept.length === 0) this.byDocument.delete(documentId);
    else this.byDocument.set(documentId, kept);
    return removed;
  }

  /** Chunks holding `term` (removed ones too, until the next rebuild). */
  df(term: string): number {
    return this.main.df(term) + (this.deltaPostings()?.df(term) ?? 0);
  }

  /**
   * The terms a truncated word stands for ("toxo": toxoplasmosi): the index's terms beginning
   * with it and longer by three letters or more, at most `max`, those most chunks hold first.
   */
  truncations(prefix: string, max = 3): string[] {
    const counts = new Map<string, number>();
    for (const postings of [this.main, this.deltaPostings()]) {
      for (const [term, df] of postings?.termsStartingWith(prefix) ?? []) {
        if (term.length >= prefix.length + 3) counts.set(term, (counts.get(term) ?? 0) + df);
      }
    }
    return [...counts]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, max)
      .map(([term]) => term);
  }

  /** The ids of the `k` best chunks for the terms by BM25, best first, within `category` if given. */
  search(terms: readonly string[], k: number, category?: string): string[] {
    let wanted = -1;
    if (category !== undefined) {
      wanted = this.categories.get(category) ?? -2;
      if (wanted === -2) return [];
    }
    const removed = this.removedFlag;
    const categoryOf = this.categoryOf;
    const offset = this.main.size;
    const acceptMain = (d: number) => removed[d] === 0 && (wanted < 0 || categoryOf[d] === wanted);
    const acceptDelta = (d: number) => acceptMain(d + offset);
    const hits = this.main.topKScored(terms, k, acceptMain);
    const delta = this.deltaPostings();
    if (delta !== null) {
      for (const [d, score] of delta.topKScored(terms, k, acceptDelta)) {
        hits.push([d + offset, score]);
      }
      hits.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    }
    return hits.slice(0, k).map(([d]) => this.ids[d]!);
  }

  private deltaPostings(): Postings | null {
    if (this.delta === null && this.deltaTerms.length > 0) {
      this.delta = new Postings(this.deltaTerms, this.collectionStats(), SERVICE_BM25);
    }
    return this.delta;
  }

  private collectionStats(): CollectionStats {
    const main = this.main;
    const length = main.totalLength + this.deltaTerms.reduce((n, t) => n + t.length, 0);
    const size = main.size + this.deltaTerms.length;
    const own = new Map<string, number>();
    for (const terms of this.deltaTerms) {
      for (const term of new Set(terms)) own.set(term, (own.get(term) ?? 0) + 1);
    }
    return {
      size,
      averageLength: length / Math.max(1, size),
      df: (term) => main.df(term) + (own.get(term) ?? 0),
    };
  }

  private place(chunk: LexicalChunk): void {
    const ordinal = this.ids.length;
    const documentId = this.intern(chunk.documentId);
    this.ids.push(chunk.id);
    this.jobs.push(this.intern(chunk.jobId));
    this.ordinalOf.set(chunk.id, ordinal);
    const ofDocument = this.byDocument.get(documentId);
    if (ofDocument === undefined) this.byDocument.set(documentId, [ordinal]);
    else ofDocument.push(ordinal);
    let category = this.categories.get(chunk.category);
    if (category === undefined) {
      category = this.categories.size;
      if (category > 0xffff) throw new RangeError('more than 65,536 categories');
      this.categories.set(this.intern(chunk.category), category);
    }
    this.categoryOf[ordinal] = category;
  }

  /** Makes room for `n` ordinals in the per-chunk arrays. */
  private grow(n: number): void {
    if (n <= this.categoryOf.length) return;
    const capacity = Math.max(n, Math.ceil(this.categoryOf.length * 1.5), 64);
    const categoryOf = new Uint16Array(capacity);
    categoryOf.set(this.categoryOf);
    this.categoryOf = categoryOf;
    const removed = new Uint8Array(capacity);
    removed.set(this.removedFlag);
    this.removedFlag = removed;
  }

  private intern(value: string): string {
    const held = this.interned.get(value);
    if (held !== undefined) return held;
    this.interned.set(value, value);
    return value;
  }
}
