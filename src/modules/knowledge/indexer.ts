import type { Definition } from './definitions.js';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { ExtractionBudgets } from '../../config-knowledge.js';
import type { Db } from '../../db/client.js';
import { sqlState } from '../../db/errors.js';
import type { KbDocumentRow, KbJobRow } from '../../db/schema/index.js';
import type { FileStore } from '../../platform/file-store.js';
import type { Logger } from '../../platform/logger.js';
import type { EmbeddingsProvider } from '../../providers/embeddings/types.js';
import type { VectorStore } from '../../providers/vectorstore/types.js';
import type { SupportedType } from './content-type.js';
import { ExtractionError } from './extract.js';
import type { ExtractionEvent, ExtractionPool, ExtractionSummary } from './extraction-pool.js';
import type { JobStateCounter } from './job-states.js';
import { JobLost, JobWatch, ShuttingDown } from './job-watch.js';
import { jobsRepo } from './jobs-repo.js';
import { documentsRepo } from './repo.js';

export interface IndexerOptions {
  /** How long a claimed job stays a runner's own without renewal. */
  leaseMs: number;
  /** First retry delay; each further retry doubles it. */
  retryBaseMs: number;
  /** Chunks embedded and stored per step (and per progress update). */
  batchSize: number;
  /** How often a running job's row is checked for a deletion or a newer version. */
  watchMs: number;
}

export interface IndexerDeps {
  db: Db;
  files: FileStore;
  embeddings: EmbeddingsProvider;
  vectors: VectorStore;
  log: Logger;
  states: JobStateCounter;
  pool: ExtractionPool;
  budgets: ExtractionBudgets;
  /** The offline embeddings are computed in the extraction threads; a remote provider is not. */
  embedInThreads: boolean;
  /** Called once a version went live: cached search results are out of date. */
  corpusChanged?: () => Promise<void>;
}

/** A job that ended this run: the queue schedules the retry, if any. */
export type RunOutcome =
  | { kind: 'skipped' }
  | { kind: 'completed' }
  | { kind: 'superseded' }
  | { kind: 'released' }
  | { kind: 'retry'; runAfter: Date }
  | { kind: 'failed' };

type Batch = Extract<ExtractionEvent, { type: 'batch' }>;

/**
 * Runs one indexing job: threads read, extract, chunk and embed the original; this thread stores
 * chunks and vectors a batch at a time, then makes them live in one transaction. Errors retry with
 * backoff while `retry_count < max_retries`; an unreadable document (encrypted, corrupt, no text,
 * over a budget) fails at once. A job deleted or superseded is stopped within `watchMs`; on
 * shutdown, running jobs are released for the next runner.
 */
export class Indexer {
  private readonly running = new Map<string, JobWatch>();
  private stopping = false;

  constructor(
    private readonly deps: IndexerDeps,
    private readonly options: IndexerOptions,
  ) {}

  async run(jobId: string): Promise<RunOutcome> {
    const { db } = this.deps;
    if (this.stopping) return { kind: 'skipped' };
    const job = await jobsRepo.claim(db, jobId, this.options.leaseMs);
    if (job === undefined) return { kind: 'skipped' };
    this.deps.states.reached('running');
    this.deps.log.info({ jobId: job.id, retryCount: job.retryCount }, 'indexing job started');
    const document = await documentsRepo.find(db, job.documentId);
    if (document === undefined) return { kind: 'skipped' };
    // A stop that came while the job was being claimed found no watch to abort: it starts aborted.
    const watch = new JobWatch(db, job.id, this.options, this.stopping);
    this.running.set(job.id, watch);
    try {
      await this.cleanUp(job.id);
      if (!(await documentsRepo.markProcessing(db, document.id, job.id))) throw new JobLost();
      return await this.index(job, document, watch.signal);
    } catch (err) {
      return await this.ended(job, document, watch.signal.aborted ? watch.signal.reason : err);
    } finally {
      watch.stop();
      this.running.delete(job.id);
    }
  }

  /** Stops taking jobs and stops the running ones; each is released for another runner. */
  stop(): void {
    this.stopping = true;
    for (const watch of this.running.values()) watch.abort(new ShuttingDown());
  }

  private async index(job: KbJobRow, document: KbDocumentRow, signal: AbortSignal) {
    const { embeddings, vectors, files, pool } = this.deps;
    await vectors.ensureReady(embeddings.dimensions, embeddings.model);
    // Not under `signal`: a stream aborted before anyone reads it errors with nobody listening.
    // It is destroyed below whatever happens.
    const source = await files.get(document.storageKey);
    const extraction = pool.extract({
      source: source as AsyncIterable<Uint8Array>,
      contentType: document.contentType as SupportedType,
      title: document.title,
      budgets: this.deps.budgets,
      batchSize: this.options.batchSize,
      embedDimensions: this.deps.embedInThreads ? embeddings.dimensions : null,
      signal,
    });
    try {
      return await this.consume(job, document, extraction, signal);
    } finally {
      // Stopping early (an error here) ends the thread's work too.
      await extraction.return({ pages: 0, chunks: 0 });
      destroy(source);
    }
  }

  /** Stores the batches as the thread sends them; makes them live once it has sent the last. */
  private async consume(
    job: KbJobRow,
    document: KbDocumentRow,
    extraction: AsyncGenerator<ExtractionEvent, ExtractionSummary>,
    signal: AbortSignal,
  ): Promise<RunOutcome> {
    let processed = 0;
    let definitions: readonly Definition[] = [];
    for (let step = await extraction.next(); ; step = await extraction.next()) {
      if (step.done === true) {
        return this.activate(
          job,
          document,
          { pages: step.value.pages, chunks: processed },
          definitions,
        );
      }
      const event = step.value;
      if (event.type === 'chunked') {
        definitions = event.definitions;
        await this.progress(job.id, { totalChunks: event.chunks, processedChunks: 0 });
        continue;
      }
      await this.store(job, document, event, signal);
      processed += event.chunks.length;
      await this.progress(job.id, { processedChunks: processed });
      // Each batch is a few small statements; HTTP gets its turn between batches.
      await yieldToEventLoop();
      signal.throwIfAborted();
    }
  }

  private async activate(
    job: KbJobRow,
    document: KbDocumentRow,
    { pages, chunks }: { pages: number; chunks: number },
    definitions: readonly Definition[],
  ) {
    const { db, states, vectors } = this.deps;
    const live = await db.transaction(async (tx) => {
      const current = await documentsRepo.lock(tx, document.id);
      if (current?.supersededBy !== null) return false;
      const count = await documentsRepo.swapChunks(tx, document.id, job.id);
      // The glossary changes with the chunks: the same transaction.
      await documentsRepo.replaceDefinitions(tx, document.id, definitions);
      await documentsRepo.update(tx, document.id, {
        status: 'indexed',
        pageCount: pages,
        chunkCount: count,
        error: null,
        indexedAt: new Date(),
      });
      await jobsRepo.update(tx, job.id, {
        state: 'completed',
        totalChunks: chunks,
        processedChunks: chunks,
        leaseUntil: null,
        finishedAt: new Date(),
      });
      return true;
    });
    if (!live) throw new JobLost();
    // Counted as the commit is seen: a client that saw the document indexed finds it counted.
    states.reached('completed');
    await this.deps.corpusChanged?.();
    this.deps.log.info({ jobId: job.id, pages, chunks }, 'indexing job completed');
    await vectors.deleteByDocument(document.id, { exceptJobId: job.id });
    return { kind: 'completed' } as const;
  }

  private async store(job: KbJobRow, document: KbDocumentRow, batch: Batch, signal: AbortSignal) {
    const { db, embeddings, vectors } = this.deps;
    const rows = batch.chunks.map((chunk) => ({
      id: randomUUID(),
      documentId: document.id,
      docKey: document.docKey,
      version: document.version,
      category: document.category,
      chunkIndex: chunk.index,
      text: chunk.text,
      page: chunk.page,
      heading: chunk.heading,
      jobId: job.id,
      embeddingModel: embeddings.model,
      searchText: chunk.searchText,
      terms: chunk.terms,
    }));
    const embedded =
      batch.vectors ??
      (await embeddings.embed(
        rows.map((r) => r.searchText),
        { signal },
      ));
    await documentsRepo.insertChunks(db, rows);
    const payload = {
      documentId: document.id,
      docKey: document.docKey,
      category: document.category,
    };
    await vectors.upsert(
      rows.map((row, i) => ({
        id: row.id,
        vector: embedded[i] ?? new Float32Array(embeddings.dimensions),
        payload: { ...payload, jobId: job.id },
        // The hybrid store's sparse BM25 vector (KB_SEARCH_ENGINE=qdrant); others ignore them.
        terms: row.terms,
      })),
    );
  }

  private async progress(jobId: string, patch: Partial<KbJobRow>): Promise<void> {
    if (!(await jobsRepo.updateRunning(this.deps.db, jobId, patch))) throw new JobLost();
  }

  /** What an earlier, interrupted run of the same job left behind. */
  private async cleanUp(jobId: string): Promise<void> {
    await documentsRepo.deleteChunksOfJob(this.deps.db, jobId);
    await this.deps.vectors.deleteByJob(jobId);
  }

  /** A run that did not complete: superseded, stopped by shutdown, or failed. */
  private async ended(job: KbJobRow, document: KbDocumentRow, err: unknown): Promise<RunOutcome> {
    if (err instanceof JobLost) {
      // Its chunks were never live; nobody else will remove them.
      await this.cleanUp(job.id).catch(() => undefined);
      return { kind: 'superseded' };
    }
    if (err instanceof ShuttingDown) return this.release(job, document);
    return this.failed(job, document, err);
  }

  /** Back to pending, no retry spent: the next runner (here after a restart, or another) starts it. */
  private async release(job: KbJobRow, document: KbDocumentRow): Promise<RunOutcome> {
    await this.cleanUp(job.id).catch(() => undefined);
    const released = await this.deps.db.transaction(async (tx) => {
      const patch = { state: 'pending' as const, leaseUntil: null, runAfter: new Date() };
      if (!(await jobsRepo.updateRunning(tx, job.id, patch))) return false;
      await documentsRepo.updateCurrent(tx, document.id, { status: 'uploaded' });
      return true;
    });
    if (!released) return { kind: 'superseded' };
    this.deps.states.reached('pending');
    this.deps.log.info({ jobId: job.id }, 'indexing job released');
    return { kind: 'released' };
  }

  private async failed(job: KbJobRow, document: KbDocumentRow, err: unknown): Promise<RunOutcome> {
    const permanent = err instanceof ExtractionError;
    const retry = !permanent && job.retryCount < job.maxRetries;
    const details = permanent
      ? { ...err.details, retryable: false }
      : { code: 'indexing_error', message: messageOf(err, job, retry), retryable: retry };
    // Not the error itself: a failed query's message carries its parameters, i.e. document text.
    const cause = { name: err instanceof Error ? err.name : typeof err, sqlState: sqlState(err) };
    this.deps.log.warn({ jobId: job.id, code: details.code, cause }, 'indexing job failed');
    await this.cleanUp(job.id).catch(() => undefined);
    const runAfter = new Date(Date.now() + this.options.retryBaseMs * 2 ** job.retryCount);
    const patch: Partial<KbJobRow> = retry
      ? {
          state: 'pending',
          retryCount: job.retryCount + 1,
          errorDetails: details,
          leaseUntil: null,
          runAfter,
        }
      : { state: 'failed', errorDetails: details, leaseUntil: null, finishedAt: new Date() };
    // One transaction: a reader never sees the job failed and its document still processing.
    const recorded = await this.deps.db.transaction(async (tx) => {
      if (!(await jobsRepo.updateRunning(tx, job.id, patch))) return false;
      const status = retry ? 'uploaded' : 'failed';
      await documentsRepo.update(tx, document.id, { status, error: details.message });
      return true;
    });
    if (!recorded) return { kind: 'superseded' };
    this.deps.states.reached(retry ? 'pending' : 'failed');
    return retry ? { kind: 'retry', runAfter } : { kind: 'failed' };
  }
}

function destroy(stream: NodeJS.ReadableStream): void {
  if ('destroy' in stream && typeof stream.destroy === 'function') (stream as Readable).destroy();
}

/** Internal errors are summarised without stack or SQL: the message is shown to administrators. */
function messageOf(err: unknown, job: KbJobRow, retry: boolean): string {
  const name = err instanceof Error ? err.name : 'Error';
  return retry
    ? `Indexing failed (${name}); retry ${String(job.retryCount + 1)} of ${String(job.maxRetries)} is scheduled`
    : `Indexing failed (${name}) after ${String(job.maxRetries)} retries`;
}
