import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import { sqlState } from '../../db/errors.js';
import type { KbDocumentRow, KbJobRow } from '../../db/schema/index.js';
import type { FileStore } from '../../platform/file-store.js';
import type { Logger } from '../../platform/logger.js';
import type { EmbeddingsProvider } from '../../providers/embeddings/types.js';
import type { VectorStore } from '../../providers/vectorstore/types.js';
import { expandAbbreviations } from './abbreviations.js';
import { chunkPages, type Chunk } from './chunk.js';
import type { SupportedType } from './content-type.js';
import { ExtractionError, extractPages } from './extract.js';
import type { JobStateCounter } from './job-states.js';
import { jobsRepo } from './jobs-repo.js';
import { documentsRepo } from './repo.js';

export interface IndexerOptions {
  /** How long a claimed job stays a runner's own without renewal. */
  leaseMs: number;
  /** First retry delay; each further retry doubles it. */
  retryBaseMs: number;
  /** Chunks embedded and stored per step (and per progress update). */
  batchSize: number;
}

/** A job that ended this run: the queue schedules the retry, if any. */
export type RunOutcome =
  | { kind: 'skipped' }
  | { kind: 'completed' }
  | { kind: 'superseded' }
  | { kind: 'retry'; delayMs: number }
  | { kind: 'failed' };

/** Stops a run whose job is no longer its own (superseded, deleted, or taken over). */
class JobLost extends Error {}

/**
 * Runs one indexing job: read the original, extract, chunk, embed, store chunks and vectors with
 * progress, then make the new chunks live in one transaction. Errors retry with backoff while
 * `retry_count < max_retries`; a document that cannot be read (encrypted, corrupt, no text) fails
 * at once, since retrying cannot help.
 */
export class Indexer {
  constructor(
    private readonly db: Db,
    private readonly files: FileStore,
    private readonly embeddings: EmbeddingsProvider,
    private readonly vectors: VectorStore,
    private readonly log: Logger,
    private readonly options: IndexerOptions,
    private readonly states: JobStateCounter,
  ) {}

  async run(jobId: string): Promise<RunOutcome> {
    const job = await jobsRepo.claim(this.db, jobId, this.options.leaseMs);
    if (job === undefined) return { kind: 'skipped' };
    this.states.reached('running');
    const document = await documentsRepo.find(this.db, job.documentId);
    if (document === undefined) return { kind: 'skipped' };
    const renewal = setInterval(() => {
      void jobsRepo.renew(this.db, job.id, this.options.leaseMs).catch(() => undefined);
    }, this.options.leaseMs / 3);
    renewal.unref();
    try {
      await this.cleanUp(job.id);
      await documentsRepo.update(this.db, document.id, { status: 'processing', error: null });
      return await this.index(job, document);
    } catch (err) {
      if (err instanceof JobLost) return { kind: 'superseded' };
      return await this.failed(job, document, err);
    } finally {
      clearInterval(renewal);
    }
  }

  private async index(job: KbJobRow, document: KbDocumentRow): Promise<RunOutcome> {
    const bytes = await readAll(await this.files.get(document.storageKey));
    const pages = await extractPages(bytes, document.contentType as SupportedType);
    const chunks = chunkPages(pages);
    await this.progress(job.id, { totalChunks: chunks.length, processedChunks: 0 });
    await this.vectors.ensureReady(this.embeddings.dimensions, this.embeddings.model);
    for (let start = 0; start < chunks.length; start += this.options.batchSize) {
      const batch = chunks.slice(start, start + this.options.batchSize);
      await this.store(job, document, batch);
      await this.progress(job.id, { processedChunks: start + batch.length });
    }
    const live = await this.db.transaction(async (tx) => {
      const current = await documentsRepo.lock(tx, document.id);
      if (current?.supersededBy !== null) return false;
      const count = await documentsRepo.swapChunks(tx, document.id, job.id);
      await documentsRepo.update(tx, document.id, {
        status: 'indexed',
        pageCount: pages.length,
        chunkCount: count,
        error: null,
        indexedAt: new Date(),
      });
      await jobsRepo.update(tx, job.id, {
        state: 'completed',
        leaseUntil: null,
        finishedAt: new Date(),
      });
      return true;
    });
    if (!live) throw new JobLost();
    this.states.reached('completed');
    await this.vectors.deleteByDocument(document.id, { exceptJobId: job.id });
    return { kind: 'completed' };
  }

  private async store(job: KbJobRow, document: KbDocumentRow, batch: Chunk[]): Promise<void> {
    const rows = batch.map((chunk) => ({
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
      embeddingModel: this.embeddings.model,
      searchText: searchTextOf(document.title, chunk),
    }));
    const vectors = await this.embeddings.embed(rows.map((r) => r.searchText));
    await documentsRepo.insertChunks(this.db, rows);
    await this.vectors.upsert(
      rows.map((row, i) => ({
        id: row.id,
        vector: vectors[i] ?? new Float32Array(this.embeddings.dimensions),
        payload: {
          documentId: document.id,
          docKey: document.docKey,
          category: document.category,
          jobId: job.id,
        },
      })),
    );
  }

  private async progress(jobId: string, patch: Partial<KbJobRow>): Promise<void> {
    if (!(await jobsRepo.updateRunning(this.db, jobId, patch))) throw new JobLost();
  }

  /** What an earlier, interrupted run of the same job left behind. */
  private async cleanUp(jobId: string): Promise<void> {
    await documentsRepo.deleteChunksOfJob(this.db, jobId);
    await this.vectors.deleteByJob(jobId);
  }

  private async failed(job: KbJobRow, document: KbDocumentRow, err: unknown): Promise<RunOutcome> {
    const permanent = err instanceof ExtractionError;
    const retry = !permanent && job.retryCount < job.maxRetries;
    const details = permanent
      ? { ...err.details, retryable: false }
      : { code: 'indexing_error', message: messageOf(err, job, retry), retryable: retry };
    // Not the error itself: a failed query's message carries its parameters, i.e. document text.
    const cause = { name: err instanceof Error ? err.name : typeof err, sqlState: sqlState(err) };
    this.log.warn({ jobId: job.id, code: details.code, cause }, 'indexing job failed');
    await this.cleanUp(job.id).catch(() => undefined);
    const delayMs = this.options.retryBaseMs * 2 ** job.retryCount;
    const patch: Partial<KbJobRow> = retry
      ? {
          state: 'pending',
          retryCount: job.retryCount + 1,
          errorDetails: details,
          leaseUntil: null,
          runAfter: new Date(Date.now() + delayMs),
        }
      : { state: 'failed', errorDetails: details, leaseUntil: null, finishedAt: new Date() };
    // One transaction: a reader never sees the job failed and its document still processing.
    const recorded = await this.db.transaction(async (tx) => {
      if (!(await jobsRepo.updateRunning(tx, job.id, patch))) return false;
      await documentsRepo.update(tx, document.id, {
        status: retry ? 'uploaded' : 'failed',
        error: details.message,
      });
      return true;
    });
    if (!recorded) return { kind: 'superseded' };
    this.states.reached(retry ? 'pending' : 'failed');
    return retry ? { kind: 'retry', delayMs } : { kind: 'failed' };
  }
}

/** What full-text search and embeddings read: title, heading and text, abbreviations expanded. */
function searchTextOf(title: string, chunk: Chunk): string {
  const text = [title, chunk.heading ?? '', chunk.text].filter((s) => s !== '').join('\n');
  return expandAbbreviations(text);
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Uint8Array> {
  const parts: Buffer[] = [];
  for await (const part of stream as AsyncIterable<Buffer>) parts.push(part);
  return Buffer.concat(parts);
}

/** Internal errors are summarised without stack or SQL: the message is shown to administrators. */
function messageOf(err: unknown, job: KbJobRow, retry: boolean): string {
  const name = err instanceof Error ? err.name : 'Error';
  return retry
    ? `Indexing failed (${name}); retry ${String(job.retryCount + 1)} of ${String(job.maxRetries)} is scheduled`
    : `Indexing failed (${name}) after ${String(job.maxRetries)} retries`;
}
