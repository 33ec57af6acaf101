import { TopK } from '../../platform/top-k.js';
import { AnnGraph } from './ann-graph.js';
import type { VectorHit } from './types.js';
import { createInt8Kernel, QUERY_SCALE, ROW_SCALE, type Int8Kernel } from './int8-kernel.js';

export interface IndexedEntry {
  id: string;
  documentId: string;
  jobId: string;
  category: string;
}

/**
 * Rows kept per hit for the exact second pass. Int8 scores are close but not exact; ranking the
 * best few candidates again with the float32 vectors makes the returned order and scores exact
 * unless a true hit ranks below this many near-ties in int8, which quantisation error cannot do.
 */
const rescoreCandidates = (limit: number) => Math.max(limit * 4, limit + 32);

/**
 * Candidates the graph is asked for (before a category's share scales it up): at 200,000 rows
 * this many held 99.1% of the exact top 10 (BENCHMARKS.md "Dense ranking at scale").
 */
const GRAPH_CANDIDATES = 400;

export interface DenseIndexOptions {
  /** Rows allocated at first; the index doubles as it fills. */
  initialCapacity?: number;
  /** Scan with the WebAssembly SIMD kernel where the runtime has it (tests compare both). */
  preferWasm?: boolean;
  /**
   * From this many rows on, searches ask an approximate graph (HNSW) for candidates instead of
   * scanning every row; below half of it the graph is dropped. Unset: always the exact scan.
   */
  approximateFrom?: number | undefined;
}

/**
 * The in-memory copy of one model's vectors: a contiguous int8 matrix (one scale per row) scanned
 * by the SIMD kernel, float32 copies for exact rescoring, and the payload needed to filter and
 * delete. Slots are dense: removing a row moves the last row into its place; each row also has a
 * key that never moves, the approximate graph's name for it.
 *
 * Past `approximateFrom` rows, a search takes its candidates from an HNSW graph (AnnGraph) once
 * every row is linked into it (`drainGraph`), and ranks them exactly with the float32 rows; a
 * category too rare for the graph's candidates to hold enough of it is scanned exactly.
 */
export class DenseIndex {
  private kernel: Int8Kernel;
  private floats: Float32Array;
  /** max|x| / ROW_SCALE per row: turns an int8 dot product back into a float. */
  private rowScale: Float32Array;
  private categoryOf: Int32Array;
  private entries: IndexedEntry[] = [];
  private slotOf = new Map<string, number>();
  private categoryIds = new Map<string, number>();
  /** Rows per interned category id. */
  private categoryRows: number[] = [];
  private keyOf: number[] = [];
  private slotOfKey = new Map<number, number>();
  private nextKey = 0;
  private graph: AnnGraph | undefined;
  private readonly preferWasm: boolean;
  private readonly approximateFrom: number;

  constructor(
    readonly dimensions: number,
    options: DenseIndexOptions = {},
  ) {
    const initialCapacity = options.initialCapacity ?? 1024;
    this.preferWasm = options.preferWasm ?? true;
    this.approximateFrom = options.approximateFrom ?? Infinity;
    this.kernel = createInt8Kernel(dimensions, initialCapacity, this.preferWasm);
    this.floats = new Float32Array(initialCapacity * dimensions);
    this.rowScale = new Float32Array(initialCapacity);
    this.categoryOf = new Int32Array(initialCapacity);
  }

  get size(): number {
    return this.entries.length;
  }

  has(id: string): boolean {
    return this.slotOf.has(id);
  }

  /** How the next search finds its candidates. */
  get ranking(): 'exact' | 'approximate' {
    return this.graph?.ready === true ? 'approximate' : 'exact';
  }

  /** Rows not yet linked into the approximate graph (0 without one). */
  get graphWaiting(): number {
    return this.graph?.waitingRows ?? 0;
  }

  /** Links up to `maxRows` waiting rows into the approximate graph; returns how many still wait. */
  drainGraph(maxRows: number): number {
    return this.graph?.drain(maxRows, (key) => this.floatsOfKey(key)) ?? 0;
  }

  /** Adds or replaces a vector. `vector` holds `dimensions` float32 values. */
  set(entry: IndexedEntry, vector: Float32Array): void {
    let slot = this.slotOf.get(entry.id);
    if (slot === undefined) {
      slot = this.entries.length;
      if (slot === this.kernel.capacity) this.grow(slot * 2);
      this.slotOf.set(entry.id, slot);
      this.entries.push(entry);
      const key = this.nextKey++;
      this.keyOf.push(key);
      this.slotOfKey.set(key, slot);
    } else {
      this.entries[slot] = entry;
      this.countCategory(this.categoryOf[slot] ?? 0, -1);
    }
    this.floats.set(vector, slot * this.dimensions);
    const category = this.internCategory(entry.category);
    this.categoryOf[slot] = category;
    this.countCategory(category, 1);
    this.quantise(slot, vector);
    this.keepGraph(slot);
  }

  /** Removes every entry `drop` selects; returns how many. */
  removeWhere(drop: (entry: IndexedEntry) => boolean): number {
    let removed = 0;
    for (let slot = this.entries.length - 1; slot >= 0; slot--) {
      const entry = this.entries[slot];
      if (entry !== undefined && drop(entry)) {
        this.removeSlot(slot);
        removed++;
      }
    }
    return removed;
  }

  /** The `limit` nearest rows by cosine (dot product of normalised vectors), best first. */
  search(query: Float32Array, limit: number, category?: string): VectorHit[] {
    const rows = this.entries.length;
    if (rows === 0 || limit <= 0) return [];
    const categoryId = category === undefined ? -1 : (this.categoryIds.get(category) ?? -2);
    if (categoryId === -2) return [];
    const candidates =
      this.graphCandidates(query, limit, categoryId) ??
      this.scanCandidates(query, limit, categoryId);
    return candidates
      .map((slot) => ({ slot, score: this.exactScore(slot, query) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map(({ slot, score }) => ({ id: this.entries[slot]?.id ?? '', score }));
  }

  private scanCandidates(query: Float32Array, limit: number, categoryId: number): number[] {
    const rows = this.entries.length;
    this.quantiseQuery(query);
    this.kernel.score(rows);
    return this.topCandidates(rows, rescoreCandidates(limit), categoryId);
  }

  /**
   * The graph's candidates (slots) in the category, or undefined when the exact scan must answer:
   * no graph, rows still waiting to be linked, a category too rare to ask the graph about, or
   * fewer of its rows among the candidates than asked for.
   */
  private graphCandidates(
    query: Float32Array,
    limit: number,
    categoryId: number,
  ): number[] | undefined {
    const graph = this.graph;
    if (!graph?.ready) return undefined;
    const rows = this.entries.length;
    const inCategory = categoryId < 0 ? rows : (this.categoryRows[categoryId] ?? 0);
    const want = Math.max(GRAPH_CANDIDATES, rescoreCandidates(limit));
    const ask = Math.ceil((want * rows) / Math.max(inCategory, 1));
    if (ask > rows / 4) return undefined;
    const slots: number[] = [];
    for (const key of graph.search(query, ask)) {
      const slot = this.slotOfKey.get(key);
      if (slot !== undefined && (categoryId < 0 || this.categoryOf[slot] === categoryId)) {
        slots.push(slot);
      }
    }
    return slots.length >= Math.min(limit, inCategory) ? slots : undefined;
  }

  private topCandidates(rows: number, want: number, categoryId: number): number[] {
    const heap = new TopK(want);
    const { scores } = this.kernel;
    for (let slot = 0; slot < rows; slot++) {
      if (categoryId >= 0 && this.categoryOf[slot] !== categoryId) continue;
      heap.offer(slot, (scores[slot] ?? 0) * (this.rowScale[slot] ?? 0));
    }
    return heap.sorted();
  }

  private exactScore(slot: number, query: Float32Array): number {
    const floats = this.floats;
    const offset = slot * this.dimensions;
    let sum = 0;
    for (let j = 0; j < this.dimensions; j++) sum += (floats[offset + j] ?? 0) * (query[j] ?? 0);
    return sum;
  }

  private quantise(slot: number, vector: Float32Array): void {
    const maxAbs = maxAbsOf(vector);
    const factor = maxAbs === 0 ? 0 : ROW_SCALE / maxAbs;
    const { matrix, stride } = this.kernel;
    const offset = slot * stride;
    for (let j = 0; j < this.dimensions; j++) {
      matrix[offset + j] = Math.round((vector[j] ?? 0) * factor);
    }
    this.rowScale[slot] = maxAbs / ROW_SCALE;
  }

  /** The query's own scale is the same for every row, so ranking ignores it. */
  private quantiseQuery(query: Float32Array): void {
    const maxAbs = maxAbsOf(query);
    const factor = maxAbs === 0 ? 0 : QUERY_SCALE / maxAbs;
    const target = this.kernel.query;
    for (let j = 0; j < this.dimensions; j++) target[j] = Math.round((query[j] ?? 0) * factor);
  }

  private removeSlot(slot: number): void {
    const last = this.entries.length - 1;
    const removed = this.entries[slot];
    if (removed !== undefined) this.slotOf.delete(removed.id);
    const key = this.keyOf[slot] ?? -1;
    this.slotOfKey.delete(key);
    this.graph?.remove(key);
    this.countCategory(this.categoryOf[slot] ?? 0, -1);
    if (slot !== last) this.moveSlot(last, slot);
    this.entries.pop();
    this.keyOf.pop();
    this.keepGraph(undefined);
  }

  /**
   * Keeps the approximate graph in step after `slot` was set (or a row removed): started with
   * every row once the index reaches `approximateFrom`, dropped below half of it, and built again
   * when removed rows (HNSW only marks them) outnumber the live ones.
   */
  private keepGraph(setSlot: number | undefined): void {
    const rows = this.entries.length;
    if (
      this.graph !== undefined &&
      (rows < this.approximateFrom / 2 || this.graph.tombstoneShare > 1)
    ) {
      this.graph = undefined;
    }
    if (this.graph === undefined) {
      if (rows < this.approximateFrom) return;
      this.graph = new AnnGraph(this.dimensions);
      for (const key of this.keyOf) this.graph.set(key);
      return;
    }
    if (setSlot !== undefined) this.graph.set(this.keyOf[setSlot] ?? -1);
  }

  private floatsOfKey(key: number): Float32Array | undefined {
    const slot = this.slotOfKey.get(key);
    if (slot === undefined) return undefined;
    const offset = slot * this.dimensions;
    return this.floats.subarray(offset, offset + this.dimensions);
  }

  private countCategory(categoryId: number, delta: number): void {
    this.categoryRows[categoryId] = (this.categoryRows[categoryId] ?? 0) + delta;
  }

  private moveSlot(from: number, to: number): void {
    const entry = this.entries[from];
    if (entry === undefined) return;
    const d = this.dimensions;
    const { matrix, stride } = this.kernel;
    this.floats.copyWithin(to * d, from * d, from * d + d);
    matrix.copyWithin(to * stride, from * stride, from * stride + stride);
    this.rowScale[to] = this.rowScale[from] ?? 0;
    this.categoryOf[to] = this.categoryOf[from] ?? 0;
    this.entries[to] = entry;
    this.slotOf.set(entry.id, to);
    const key = this.keyOf[from] ?? -1;
    this.keyOf[to] = key;
    this.slotOfKey.set(key, to);
  }

  private grow(capacity: number): void {
    const next = createInt8Kernel(this.dimensions, capacity, this.preferWasm);
    next.matrix.set(this.kernel.matrix);
    this.kernel = next;
    this.floats = copyInto(new Float32Array(capacity * this.dimensions), this.floats);
    this.rowScale = copyInto(new Float32Array(capacity), this.rowScale);
    this.categoryOf = copyInto(new Int32Array(capacity), this.categoryOf);
  }

  private internCategory(category: string): number {
    let id = this.categoryIds.get(category);
    if (id === undefined) {
      id = this.categoryIds.size;
      this.categoryIds.set(category, id);
    }
    return id;
  }
}

function copyInto<T extends Float32Array | Int32Array>(target: T, source: T): T {
  target.set(source);
  return target;
}

function maxAbsOf(vector: Float32Array): number {
  let max = 0;
  for (const x of vector) max = Math.max(max, Math.abs(x));
  return max;
}
