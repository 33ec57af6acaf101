/* eslint-disable @typescript-eslint/no-non-null-assertion -- the hot loops index typed arrays at
   positions kept in bounds by construction; a check per posting would cost as much as the score. */
import { TopK } from '../../../platform/top-k.js';

/**
 * BM25 postings: for each term its chunk ordinals (Uint32, ascending) and term frequencies
 * (Uint8), cut in blocks of BLOCK postings with each block's last ordinal and its highest BM25
 * score. Two ways to search them:
 *
 * - `exhaustive`: every posting of every query term scored into an accumulator (term at a
 *   time), then the top k. Exact BM25: the reference `topK` is tested against.
 * - `topK`: document at a time with MaxScore (terms whose summed maximum cannot lift a chunk
 *   into the top k only score chunks the other terms found) and the block maxima (a chunk is
 *   given up as soon as its score plus the maxima of the blocks it could still get cannot beat
 *   the k-th score). Safe: it returns the exhaustive top k, ties broken by ordinal. A filter
 *   (`accept`) drops chunks before they can enter the top k, which never raises the k-th score,
 *   so the pruning stays safe.
 *
 * BM25 as Lucene computes it: idf = ln(1 + (N - df + 0.5) / (df + 0.5)), with k1 and b given
 * (Lucene's defaults, k1 = 1.2 and b = 0.75, unless told otherwise).
 * A segment is static once built; `stats` lets a small segment score with the collection
 * statistics of a larger one plus its own (see LexicalSegments). Chosen in docs/adr/0004.
 */

/** BM25's term-frequency saturation (k1) and length normalisation (b). */
export interface Bm25Parameters {
  k1: number;
  b: number;
}
export const LUCENE_BM25: Readonly<Bm25Parameters> = { k1: 1.2, b: 0.75 };
/** For the bench, which compares candidates at Lucene's defaults. */
export const K1 = LUCENE_BM25.k1;
export const B = LUCENE_BM25.b;
const BLOCK = 128;

/** Collection statistics a segment scores with, when not its own. */
export interface CollectionStats {
  size: number;
  averageLength: number;
  /** Chunks holding `term` in the collection, this segment's own included. */
  df(term: string): number;
}

/** Chunk ordinals a search may return: false drops one (removed, another category). */
export type Accept = (ordinal: number) => boolean;

export class Postings {
  readonly size: number;
  private readonly dict = new Map<string, number>();
  private readonly docs: Uint32Array[] = [];
  private readonly tfs: Uint8Array[] = [];
  private readonly idf: Float64Array;
  private readonly maxScore: Float64Array;
  private readonly blockLast: Uint32Array[] = [];
  private readonly blockMax: Float32Array[] = [];
  /** k1 * (1 - b + b * length / average length), per chunk. */
  private readonly norm: Float32Array;
  private readonly acc: Float64Array;

  /** Chunks of this segment holding each term (by term id). */
  private readonly ownDf: Uint32Array;
  readonly totalLength: number;

  private readonly k1: number;
  /** The dictionary's terms in order, for `termsStartingWith` (made when first asked). */
  private sorted: string[] | undefined;

  constructor(
    chunks: readonly (readonly string[])[],
    stats?: CollectionStats,
    bm25: Readonly<Bm25Parameters> = LUCENE_BM25,
  ) {
    const { k1, b } = bm25;
    this.k1 = k1;
    const n = chunks.length;
    this.size = n;
    // Pass 1: document frequencies, so every list is allocated once at its size.
    const df: number[] = [];
    let totalLength = 0;
    for (const terms of chunks) {
      totalLength += terms.length;
      for (const term of new Set(terms)) {
        let id = this.dict.get(term);
        if (id === undefined) {
          id = df.length;
          this.dict.set(term, id);
          df.push(0);
        }
        df[id]!++;
      }
    }
    this.totalLength = totalLength;
    this.ownDf = Uint32Array.from(df);
    const avg = stats?.averageLength ?? totalLength / Math.max(1, n);
    const collection = stats?.size ?? n;
    const dfOf = (term: string, id: number) => stats?.df(term) ?? df[id]!;
    const terms = [...this.dict.keys()];
    this.norm = new Float32Array(n);
    for (let d = 0; d < n; d++) this.norm[d] = k1 * (1 - b + (b * chunks[d]!.length) / avg);
    for (const count of df) {
      this.docs.push(new Uint32Array(count));
      this.tfs.push(new Uint8Array(count));
    }
    // Pass 2: the postings, in chunk order.
    const fill = new Uint32Array(df.length);
    const tf = new Map<number, number>();
    for (let d = 0; d < n; d++) {
      tf.clear();
      for (const term of chunks[d]!) {
        const id = this.dict.get(term)!;
        tf.set(id, (tf.get(id) ?? 0) + 1);
      }
      for (const [id, count] of tf) {
        const at = fill[id]!++;
        this.docs[id]![at] = d;
        this.tfs[id]![at] = Math.min(255, count);
      }
    }
    // The bounds: each block's highest score, each term's highest.
    this.idf = new Float64Array(df.length);
    this.maxScore = new Float64Array(df.length);
    for (let t = 0; t < df.length; t++) {
      const termDf = dfOf(terms[t]!, t);
      const idf = Math.log(1 + (collection - termDf + 0.5) / (termDf + 0.5));
      this.idf[t] = idf;
      const docs = this.docs[t]!;
      const blocks = Math.ceil(docs.length / BLOCK);
      const last = new Uint32Array(blocks);
      const max = new Float32Array(blocks);
      let termMax = 0;
      for (let b = 0; b < blocks; b++) {
        const end = Math.min(docs.length, (b + 1) * BLOCK);
        let m = 0;
        for (let i = b * BLOCK; i < end; i++) m = Math.max(m, this.score(t, i));
        // Rounded up to float32, so the bound never falls below a score.
        max[b] = m;
        if (max[b]! < m) max[b] = m * (1 + 1e-6);
        last[b] = docs[end - 1]!;
        termMax = Math.max(termMax, max[b]!);
      }
      this.blockLast.push(last);
      this.blockMax.push(max);
      this.maxScore[t] = termMax;
    }
    this.acc = new Float64Array(n);
  }

  get terms(): number {
    return this.dict.size;
  }

  /**
   * The terms beginning with `prefix` and the chunks of this segment holding each. The sorted
   * dictionary it searches is made at the first call (a segment's terms never change).
   */
  termsStartingWith(prefix: string): [string, number][] {
    this.sorted ??= [...this.dict.keys()].sort();
    const sorted = this.sorted;
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (sorted[mid]! < prefix) low = mid + 1;
      else high = mid;
    }
    const found: [string, number][] = [];
    for (let i = low; i < sorted.length && sorted[i]!.startsWith(prefix); i += 1) {
      found.push([sorted[i]!, this.df(sorted[i]!)]);
    }
    return found;
  }

  /** Chunks of this segment that hold `term`. */
  df(term: string): number {
    const id = this.dict.get(term);
    return id === undefined ? 0 : this.ownDf[id]!;
  }

  /** Bytes held by the postings, bounds and per-chunk norms (the dictionary's strings apart). */
  get bytes(): number {
    let bytes = this.norm.byteLength + this.acc.byteLength + this.idf.byteLength * 2;
    bytes += this.ownDf.byteLength;
    for (let t = 0; t < this.docs.length; t++) {
      bytes += this.docs[t]!.byteLength + this.tfs[t]!.byteLength;
      bytes += this.blockLast[t]!.byteLength + this.blockMax[t]!.byteLength;
    }
    return bytes;
  }

  private score(t: number, i: number): number {
    const tf = this.tfs[t]![i]!;
    return (this.idf[t]! * tf * (this.k1 + 1)) / (tf + this.norm[this.docs[t]![i]!]!);
  }

  private termIds(terms: readonly string[]): number[] {
    const ids = new Set<number>();
    for (const term of terms) {
      const id = this.dict.get(term);
      if (id !== undefined) ids.add(id);
    }
    return [...ids];
  }

  /** The exact BM25 score of one chunk for the terms (0 if it holds none of them). */
  scoreOf(terms: readonly string[], doc: number): number {
    let score = 0;
    for (const t of this.termIds(terms)) {
      const docs = this.docs[t]!;
      let [lo, hi] = [0, docs.length];
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (docs[mid]! < doc) lo = mid + 1;
        else hi = mid;
      }
      if (docs[lo] === doc) score += this.score(t, lo);
    }
    return score;
  }

  /** How many chunks hold at least one of the terms. */
  matching(terms: readonly string[]): number {
    const seen = new Uint8Array(this.size);
    let count = 0;
    for (const t of this.termIds(terms)) {
      for (const d of this.docs[t]!) {
        if (seen[d] === 0) {
          seen[d] = 1;
          count++;
        }
      }
    }
    return count;
  }

  /** Exact BM25 top k by scoring every posting of every query term. */
  exhaustive(terms: readonly string[], k: number, accept?: Accept): number[] {
    const acc = this.acc;
    const touched: number[] = [];
    for (const t of this.termIds(terms)) {
      const docs = this.docs[t]!;
      for (let i = 0; i < docs.length; i++) {
        const d = docs[i]!;
        if (acc[d] === 0) touched.push(d);
        acc[d]! += this.score(t, i);
      }
    }
    const heap = new TopK(k);
    for (const d of touched) {
      if (accept === undefined || accept(d)) heap.offer(d, acc[d]!);
      acc[d] = 0;
    }
    return heap.sorted();
  }

  /** The same top k, document at a time with MaxScore and block maxima. */
  topK(terms: readonly string[], k: number, accept?: Accept): number[] {
    return this.topKScored(terms, k, accept).map(([d]) => d);
  }

  /** `topK` with each chunk's BM25 score: [ordinal, score], best first. */
  topKScored(terms: readonly string[], k: number, accept?: Accept): [number, number][] {
    const ids = this.termIds(terms).sort((a, b) => this.maxScore[a]! - this.maxScore[b]!);
    const m = ids.length;
    const heap = new TopK(k);
    if (m === 0) return [];
    const docs = ids.map((t) => this.docs[t]!);
    const lasts = ids.map((t) => this.blockLast[t]!);
    const maxes = ids.map((t) => this.blockMax[t]!);
    const pos = new Int32Array(m);
    const block = new Int32Array(m);
    // upTo[i]: the summed maxima of terms 0..i (the cheapest first).
    const upTo = new Float64Array(m);
    for (let i = 0, sum = 0; i < m; i++) upTo[i] = sum += this.maxScore[ids[i]!]!;
    let theta = -1; // the k-th score once k chunks are held
    let essential = 0; // terms below this index only score chunks the others found
    for (;;) {
      let d = 0xffffffff;
      for (let i = essential; i < m; i++) {
        const p = pos[i]!;
        if (p < docs[i]!.length && docs[i]![p]! < d) d = docs[i]![p]!;
      }
      if (d === 0xffffffff) break;
      let score = 0;
      for (let i = essential; i < m; i++) {
        const p = pos[i]!;
        if (p < docs[i]!.length && docs[i]![p] === d) {
          score += this.score(ids[i]!, p);
          pos[i] = p + 1;
        }
      }
      let alive = true;
      for (let i = essential - 1; i >= 0; i--) {
        if (score + upTo[i]! <= theta) {
          alive = false;
          break;
        }
        const list = docs[i]!;
        const last = lasts[i]!;
        let b = block[i]!;
        while (b < last.length && last[b]! < d) b++;
        block[i] = b;
        if (b === last.length) continue;
        const below = i > 0 ? upTo[i - 1]! : 0;
        if (score + maxes[i]![b]! + below <= theta) {
          alive = false;
          break;
        }
        let p = Math.max(pos[i]!, b * BLOCK);
        while (list[p]! < d) p++;
        pos[i] = p;
        if (list[p] === d) score += this.score(ids[i]!, p);
      }
      if (
        alive &&
        score > theta &&
        (accept === undefined || accept(d)) &&
        heap.offer(d, score) &&
        heap.full
      ) {
        theta = heap.min;
        while (essential < m && upTo[essential]! <= theta) essential++;
      }
    }
    return heap.sortedWithScores();
  }
}
