import { createRequire } from 'node:module';
import type * as Usearch from 'usearch';

let loaded: typeof Usearch | undefined;

/**
 * usearch, loaded when the first graph is made: a copy below the threshold never loads the native
 * addon into its thread. The CommonJS build: the ESM build finds its addon by walking up from a
 * stack frame's file name, which under tsx's loader in a worker thread (tests, `make run` from the
 * sources) never ends.
 */
function usearch(): typeof Usearch {
  loaded ??= createRequire(import.meta.url)('usearch') as typeof Usearch;
  return loaded;
}

/**
 * An approximate nearest-neighbour graph (HNSW, usearch, int8 cosine) over a DenseIndex's rows,
 * keyed by the index's stable row keys. The graph holds its own int8 copy of each vector; the
 * DenseIndex keeps the float32 rows and ranks the graph's candidates again exactly.
 *
 * Rows join in slices (`drain`), not when they are set: a load of 200,000 rows takes tens of
 * seconds to link, and the thread that owns the graph answers searches between slices (exactly,
 * by scanning every row, until nothing is waiting).
 */
export class AnnGraph {
  private readonly graph: Usearch.Index;
  /** Keys set but not yet linked into the graph, in the order they were set. */
  private readonly waiting = new Set<number>();
  /** Rows removed from the graph since it was built: HNSW only marks them. */
  private removedSinceBuild = 0;

  constructor(readonly dimensions: number) {
    const { Index, MetricKind, ScalarKind } = usearch();
    this.graph = new Index({
      dimensions,
      metric: MetricKind.Cos,
      quantization: ScalarKind.I8,
      connectivity: GRAPH.connectivity,
      expansion_add: GRAPH.expansionAdd,
      expansion_search: GRAPH.expansionSearch,
      multi: false,
    });
  }

  /** Every row set so far is in the graph. */
  get ready(): boolean {
    return this.waiting.size === 0;
  }

  get waitingRows(): number {
    return this.waiting.size;
  }

  /** Removed rows still taking space in the graph, against the rows it links. */
  get tombstoneShare(): number {
    const linked = this.graph.size();
    return linked === 0 ? 0 : this.removedSinceBuild / linked;
  }

  /** A row was added, or its vector replaced: it is linked (again) at the next drain. */
  set(key: number): void {
    if (this.waiting.has(key)) return;
    if (this.graph.contains(BigInt(key)) === true) this.remove(key);
    this.waiting.add(key);
  }

  remove(key: number): void {
    if (this.waiting.delete(key)) return;
    if (this.graph.remove(BigInt(key)) === 1) this.removedSinceBuild++;
  }

  /**
   * Links up to `maxRows` waiting rows (using every core for a large slice); `vectorOf` gives a
   * key's current float32 vector. Returns how many still wait.
   */
  drain(maxRows: number, vectorOf: (key: number) => Float32Array | undefined): number {
    const keys: bigint[] = [];
    const vectors: Float32Array[] = [];
    for (const key of this.waiting) {
      if (keys.length === maxRows) break;
      this.waiting.delete(key);
      const vector = vectorOf(key);
      if (vector === undefined) continue;
      keys.push(BigInt(key));
      vectors.push(vector);
    }
    if (keys.length > 0) {
      const flat = new Float32Array(keys.length * this.dimensions);
      vectors.forEach((vector, i) => {
        flat.set(vector, i * this.dimensions);
      });
      this.graph.add(BigUint64Array.from(keys), flat, keys.length >= 64 ? 0 : 1);
    }
    return this.waiting.size;
  }

  /** The keys of about the `count` nearest rows, nearest first. */
  search(query: Float32Array, count: number): number[] {
    if (this.graph.size() === 0) return [];
    const { keys } = this.graph.search(query, count, 1);
    return Array.from(keys, Number);
  }
}

/**
 * The graph's shape. Measured on 200,000 chunks of the bench corpus (hashed embeddings, 768
 * dimensions; `make bench-vectors`): see BENCHMARKS.md "Dense ranking at scale".
 */
const GRAPH = { connectivity: 16, expansionAdd: 64, expansionSearch: 64 } as const;
