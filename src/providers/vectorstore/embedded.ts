import { performance } from 'node:perf_hooks';
import type { Db } from '../../db/client.js';
import { DenseIndex } from './dense-index.js';
import {
  kbVectorsRepo,
  type LoadCursor,
  type NewVectorRow,
  type StoredVectorRow,
  type VectorState,
} from './embedded-repo.js';
import { VectorStoreError } from './errors.js';
import { MAX_DIMENSIONS } from './int8-kernel.js';
import type { VectorHit, VectorPoint, VectorStore } from './types.js';
import { decodeVectorInto, encodeVector } from './vector-codec.js';

export interface EmbeddedVectorStoreOptions {
  /**
   * How long the in-memory copy may go without checking the database for other instances'
   * writes (one primary-key read). 0 checks on every search. This instance's own writes are
   * always visible to its next search, whatever the value.
   */
  maxStalenessMs?: number;
  /** Rows fetched per query while loading. */
  pageSize?: number;
  /**
   * Load the copy in `ensureReady` instead of in the first search (about 1-4 s for 20,000 x 384
   * here). Instances that only write (indexing workers) leave it off and never hold a copy.
   */
  preload?: boolean;
  /** Monotonic milliseconds (tests). */
  now?: () => number;
}

interface Ready {
  model: string;
  dimensions: number;
}

/**
 * The default vector store: vectors persisted in kb_vectors (PostgreSQL or PGlite, no extension),
 * searched in process over an in-memory copy (see DenseIndex).
 *
 * Instances sharing a database stay in step through kb_vector_state: a search first catches up
 * when its copy is older than `maxStalenessMs` (or behind this instance's own last write),
 * loading the rows with a newer `seq` or, when another instance deleted rows (`epoch` moved),
 * everything again. A delete on this instance is applied to the copy before it returns.
 *
 * Models: the copy holds only vectors of the model given to `ensureReady`; rows of other models
 * stay in the table, ignored, until their documents are reindexed or deleted. Rows of that model
 * with another size are ignored too.
 */
export class EmbeddedVectorStore implements VectorStore {
  readonly kind = 'embedded' as const;
  private ready: Ready | undefined;
  private index: DenseIndex | undefined;
  private loadedSeq = 0;
  /** -1: nothing loaded yet. */
  private loadedEpoch = -1;
  /** The highest seq this instance wrote: its next search must have loaded it. */
  private writtenSeq = 0;
  private checkedAt = -Infinity;
  private queue: Promise<unknown> = Promise.resolve();
  private refreshing: Promise<void> | undefined;
  private readonly maxStalenessMs: number;
  private readonly pageSize: number;
  private readonly preload: boolean;
  private readonly now: () => number;

  constructor(
    private readonly db: Db,
    options: EmbeddedVectorStoreOptions = {},
  ) {
    this.maxStalenessMs = options.maxStalenessMs ?? 1000;
    this.pageSize = options.pageSize ?? 5000;
    this.preload = options.preload ?? false;
    this.now = options.now ?? (() => performance.now());
  }

  async ensureReady(dimensions: number, model: string): Promise<void> {
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_DIMENSIONS) {
      throw new VectorStoreError('embedded', `unsupported dimensions: ${dimensions}`, false);
    }
    if (this.ready?.model !== model || this.ready.dimensions !== dimensions) {
      await kbVectorsRepo.probe(this.db);
      await this.exclusive(() => {
        this.ready = { model, dimensions };
        this.index = undefined;
        this.loadedEpoch = -1;
        this.loadedSeq = 0;
        return Promise.resolve();
      });
    }
    if (this.preload) await this.refresh();
  }

  async upsert(points: readonly VectorPoint[]): Promise<void> {
    const { model, dimensions } = this.requireReady();
    if (points.length === 0) return;
    // One row per id: a statement may not update the same row twice. The last one wins.
    const rows = new Map<string, NewVectorRow>();
    for (const { id, vector, payload } of points) {
      this.checkDimensions(vector, dimensions);
      rows.set(id, { chunkId: id, ...payload, embedding: encodeVector(vector) });
    }
    const seq = await kbVectorsRepo.upsert(this.db, model, [...rows.values()]);
    this.writtenSeq = Math.max(this.writtenSeq, seq);
  }

  async search(
    vector: Float32Array,
    options: { limit: number; category?: string | undefined },
  ): Promise<VectorHit[]> {
    this.checkDimensions(vector, this.requireReady().dimensions);
    await this.refresh();
    return this.index?.search(vector, options.limit, options.category) ?? [];
  }

  deleteByDocument(documentId: string, options: { exceptJobId?: string } = {}): Promise<void> {
    const { exceptJobId } = options;
    return this.exclusive(async () => {
      const state = await kbVectorsRepo.deleteByDocument(this.db, documentId, exceptJobId);
      // Also when the database had none (a cascade got there first): the copy may still hold them.
      this.index?.removeWhere((e) => e.documentId === documentId && e.jobId !== exceptJobId);
      this.ownDeleteApplied(state);
    });
  }

  deleteByJob(jobId: string): Promise<void> {
    return this.exclusive(async () => {
      const state = await kbVectorsRepo.deleteByJob(this.db, jobId);
      this.index?.removeWhere((e) => e.jobId === jobId);
      this.ownDeleteApplied(state);
    });
  }

  probe(): Promise<void> {
    return kbVectorsRepo.probe(this.db);
  }

  /**
   * Makes the copy include every write committed before this call, unless the last check is
   * younger than `maxStalenessMs` and this instance wrote nothing since.
   */
  private async refresh(): Promise<void> {
    const stale =
      this.loadedEpoch < 0 ||
      this.loadedSeq < this.writtenSeq ||
      this.now() - this.checkedAt >= this.maxStalenessMs;
    if (!stale) return;
    // A catch-up already running may have read the state before this call: wait for it, then
    // share the next one with whichever concurrent searches also need it.
    await this.refreshing?.catch(() => undefined);
    this.refreshing ??= this.exclusive(() => this.catchUp()).finally(() => {
      this.refreshing = undefined;
    });
    await this.refreshing;
  }

  private async catchUp(): Promise<void> {
    const { model, dimensions } = this.requireReady();
    const startedAt = this.now();
    const state = await kbVectorsRepo.readState(this.db);
    if (this.index === undefined || state.epoch !== this.loadedEpoch) {
      // Built aside and swapped in: searches meanwhile keep using the previous copy.
      const index = new DenseIndex(dimensions);
      await this.load(index, model, { afterSeq: 0, upToSeq: state.seq });
      this.index = index;
      this.loadedEpoch = state.epoch;
    } else if (state.seq > this.loadedSeq) {
      await this.load(this.index, model, { afterSeq: this.loadedSeq, upToSeq: state.seq });
    }
    this.loadedSeq = state.seq;
    this.checkedAt = startedAt;
  }

  private async load(index: DenseIndex, model: string, from: LoadCursor): Promise<void> {
    const scratch = new Float32Array(index.dimensions);
    for (let cursor = from; ;) {
      const rows = await kbVectorsRepo.loadPage(this.db, model, cursor, this.pageSize);
      for (const row of rows) addRow(index, row, scratch);
      const last = rows.at(-1);
      if (last === undefined || rows.length < this.pageSize) return;
      cursor = { afterSeq: last.seq, afterChunkId: last.chunkId, upToSeq: from.upToSeq };
    }
  }

  /**
   * This instance's delete is in the copy already. If nobody else deleted since the copy was
   * loaded, the copy matches the new epoch; otherwise the next search reloads everything.
   */
  private ownDeleteApplied(state: VectorState | null): void {
    if (state !== null && state.epoch === this.loadedEpoch + 1) this.loadedEpoch = state.epoch;
  }

  private requireReady(): Ready {
    if (this.ready === undefined) {
      throw new VectorStoreError('embedded', 'vector store used before ensureReady', false);
    }
    return this.ready;
  }

  private checkDimensions(vector: Float32Array, dimensions: number): void {
    if (vector.length !== dimensions) {
      const message = `vector has ${vector.length} dimensions, the store ${dimensions}`;
      throw new VectorStoreError('embedded', message, false);
    }
  }

  /** Runs `fn` after every earlier exclusive section: loads and local deletes never interleave. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

function addRow(index: DenseIndex, row: StoredVectorRow, scratch: Float32Array): void {
  // PostgreSQL wraps base64 lines; Node's decoder skips the line breaks.
  if (!decodeVectorInto(Buffer.from(row.embeddingBase64, 'base64'), scratch)) return;
  const { chunkId: id, documentId, jobId, category } = row;
  index.set({ id, documentId, jobId, category }, scratch);
}
