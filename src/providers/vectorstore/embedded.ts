import { performance } from 'node:perf_hooks';
import type { Db } from '../../db/client.js';
import { ThreadCalls } from '../../platform/thread-calls.js';
import type {
  DenseRemoval,
  DenseStatus,
  FromDenseThread,
  ToDenseThread,
} from './dense-protocol.js';
import {
  kbVectorsRepo,
  type LoadCursor,
  type NewVectorRow,
  type VectorState,
} from './embedded-repo.js';
import { VectorStoreError } from './errors.js';
import { MAX_DIMENSIONS } from './int8-kernel.js';
import type { VectorHit, VectorPoint, VectorStore } from './types.js';
import { encodeVector } from './vector-codec.js';

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
  /**
   * From this many rows on, the copy answers from an approximate graph (HNSW; see DenseIndex).
   * Unset: every search scans every row.
   */
  approximateFrom?: number | undefined;
  /** Monotonic milliseconds (tests). */
  now?: () => number;
  /** Told when the copy's thread ends unexpectedly (the next search loads the copy again). */
  onThreadEnded?: (error: Error) => void;
}

interface Ready {
  model: string;
  dimensions: number;
}

/**
 * The default vector store: vectors persisted in kb_vectors (PostgreSQL or PGlite, no extension),
 * searched in process over an in-memory copy (see DenseIndex) held by a worker thread of this
 * instance (dense-thread.ts): the scan of every vector and the decoding of loaded rows never run on
 * the thread that answers HTTP and the sockets.
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
  private readonly thread: ThreadCalls<ToDenseThread, FromDenseThread>;
  /** The thread holds a live copy (one may be built aside meanwhile). */
  private hasCopy = false;
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
  private readonly approximateFrom: number | null;
  private readonly now: () => number;

  constructor(
    private readonly db: Db,
    options: EmbeddedVectorStoreOptions = {},
  ) {
    this.maxStalenessMs = options.maxStalenessMs ?? 1000;
    this.pageSize = options.pageSize ?? 5000;
    this.preload = options.preload ?? false;
    this.approximateFrom = options.approximateFrom ?? null;
    this.now = options.now ?? (() => performance.now());
    this.thread = new ThreadCalls({
      base: import.meta.url,
      entry: 'dense-thread',
      label: 'dense index',
      onEnded: (err, closing) => {
        // The copy went with the thread: the next search starts another and loads it again.
        this.hasCopy = false;
        this.loadedEpoch = -1;
        this.loadedSeq = 0;
        if (!closing) options.onThreadEnded?.(err);
      },
    });
  }

  async ensureReady(dimensions: number, model: string): Promise<void> {
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_DIMENSIONS) {
      throw new VectorStoreError('embedded', `unsupported dimensions: ${dimensions}`, false);
    }
    if (this.ready?.model !== model || this.ready.dimensions !== dimensions) {
      await kbVectorsRepo.probe(this.db);
      await this.exclusive(async () => {
        this.ready = { model, dimensions };
        if (this.hasCopy) await this.thread.call({ type: 'drop' });
        this.hasCopy = false;
        this.loadedEpoch = -1;
        this.loadedSeq = 0;
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
    options: { limit: number; category?: string | undefined; signal?: AbortSignal | undefined },
  ): Promise<VectorHit[]> {
    this.checkDimensions(vector, this.requireReady().dimensions);
    options.signal?.throwIfAborted();
    await this.refresh();
    if (!this.hasCopy) return [];
    const { limit, category, signal } = options;
    const answer = await this.thread.call(
      { type: 'search', query: vector, limit, category: category ?? null },
      signal,
    );
    return answer.type === 'found' ? answer.hits : [];
  }

  /** What this instance's copy holds now (nothing loaded: no rows). */
  async status(): Promise<DenseStatus> {
    if (!this.hasCopy) return { rows: 0, waitingRows: 0, ranking: 'exact' };
    const answer = await this.thread.call({ type: 'status' });
    if (answer.type !== 'status') throw new Error(`dense index thread answered ${answer.type}`);
    const { rows, waitingRows, ranking } = answer;
    return { rows, waitingRows, ranking };
  }

  deleteByDocument(documentId: string, options: { exceptJobId?: string } = {}): Promise<void> {
    const { exceptJobId } = options;
    return this.exclusive(async () => {
      const state = await kbVectorsRepo.deleteByDocument(this.db, documentId, exceptJobId);
      // Also when the database had none (a cascade got there first): the copy may still hold them.
      await this.removeFromCopy({ documentId, exceptJobId: exceptJobId ?? null });
      this.ownDeleteApplied(state);
    });
  }

  deleteByJob(jobId: string): Promise<void> {
    return this.exclusive(async () => {
      const state = await kbVectorsRepo.deleteByJob(this.db, jobId);
      await this.removeFromCopy({ jobId });
      this.ownDeleteApplied(state);
    });
  }

  probe(): Promise<void> {
    return kbVectorsRepo.probe(this.db);
  }

  /**
   * Ends the copy's thread at once: a load under way fails (a shutdown does not wait a minute for
   * a copy of 200,000 vectors nobody will search); deletes are in the database already.
   */
  close(): Promise<void> {
    return this.thread.close();
  }

  private async removeFromCopy(removal: DenseRemoval): Promise<void> {
    if (this.hasCopy) await this.thread.call({ type: 'remove', removal });
  }

  /**
   * Makes the copy include every write committed before this call, unless the last check is
   * younger than `maxStalenessMs` or another search's catch-up is under way, and this instance
   * wrote nothing since.
   */
  private async refresh(): Promise<void> {
    const ownWrite = this.loadedSeq < this.writtenSeq;
    const stale =
      this.loadedEpoch < 0 || ownWrite || this.now() - this.checkedAt >= this.maxStalenessMs;
    if (!stale) return;
    // Another search is catching up already: answer from the copy as it is (it was fresh within
    // the bound when that catch-up began), unless this instance's own write must be in it. Under
    // a burst, searches no longer queue behind one state read waiting for the database.
    if (this.hasCopy && !ownWrite && this.refreshing !== undefined) return;
    // A catch-up already running may have read the state before this call: wait for it, then
    // share the next one with whichever concurrent searches also need it.
    // (Only awaited when there is one: the catch-up this call starts is visible at once.)
    if (this.refreshing !== undefined) await this.refreshing.catch(() => undefined);
    this.refreshing ??= this.exclusive(() => this.catchUp()).finally(() => {
      this.refreshing = undefined;
    });
    await this.refreshing;
  }

  private async catchUp(): Promise<void> {
    const { model, dimensions } = this.requireReady();
    const startedAt = this.now();
    const state = await kbVectorsRepo.readState(this.db);
    if (!this.hasCopy || state.epoch !== this.loadedEpoch) {
      // Built aside and swapped in: searches meanwhile keep using the previous copy.
      await this.thread.call({
        type: 'build-begin',
        dimensions,
        approximateFrom: this.approximateFrom,
      });
      await this.load(true, model, { afterSeq: 0, upToSeq: state.seq });
      await this.thread.call({ type: 'build-commit' });
      this.hasCopy = true;
      this.loadedEpoch = state.epoch;
    } else if (state.seq > this.loadedSeq) {
      await this.load(false, model, { afterSeq: this.loadedSeq, upToSeq: state.seq });
    }
    this.loadedSeq = state.seq;
    this.checkedAt = startedAt;
  }

  /** Sends the model's rows in `from` to the thread's copy (`aside`: the one being built). */
  private async load(aside: boolean, model: string, from: LoadCursor): Promise<void> {
    for (let cursor = from; ;) {
      const rows = await kbVectorsRepo.loadPage(this.db, model, cursor, this.pageSize);
      if (rows.length > 0) {
        const denseRows = rows.map(({ chunkId, documentId, jobId, category, embeddingBase64 }) => ({
          id: chunkId,
          documentId,
          jobId,
          category,
          embeddingBase64,
        }));
        await this.thread.call({ type: 'rows', aside, rows: denseRows });
      }
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
