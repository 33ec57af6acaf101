import { TopK } from '../../platform/top-k.js';
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
 * The in-memory copy of one model's vectors: a contiguous int8 matrix (one scale per row) scanned
 * by the SIMD kernel, float32 copies for exact rescoring, and the payload needed to filter and
 * delete. Slots are dense: removing a row moves the last row into its place.
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

  constructor(
    readonly dimensions: number,
    initialCapacity = 1024,
    private readonly preferWasm = true,
  ) {
    this.kernel = createInt8Kernel(dimensions, initialCapacity, preferWasm);
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

  /** Adds or replaces a vector. `vector` holds `dimensions` float32 values. */
  set(entry: IndexedEntry, vector: Float32Array): void {
    let slot = this.slotOf.get(entry.id);
    if (slot === undefined) {
      slot = this.entries.length;
      if (slot === this.kernel.capacity) this.grow(slot * 2);
      this.slotOf.set(entry.id, slot);
      this.entries.push(entry);
    } else {
      this.entries[slot] = entry;
    }
    this.floats.set(vector, slot * this.dimensions);
    this.categoryOf[slot] = this.internCategory(entry.category);
    this.quantise(slot, vector);
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
    this.quantiseQuery(query);
    this.kernel.score(rows);
    const candidates = this.topCandidates(rows, rescoreCandidates(limit), categoryId);
    return candidates
      .map((slot) => ({ slot, score: this.exactScore(slot, query) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map(({ slot, score }) => ({ id: this.entries[slot]?.id ?? '', score }));
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
    if (slot !== last) this.moveSlot(last, slot);
    this.entries.pop();
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
