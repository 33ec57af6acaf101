import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { DocumentStatus, KbDocumentRow, KbJobRow } from '../../db/schema/index.js';
import { AppError, conflict, notFound } from '../../errors.js';
import type { FileStore } from '../../platform/file-store.js';
import type { Logger } from '../../platform/logger.js';
import type { VectorStore } from '../../providers/vectorstore/types.js';
import type { AuditService, RequestContext } from '../audit/service.js';
import type { SelfActor } from '../users/service.js';
import type { JobStateCounter } from './job-states.js';
import { jobsRepo, type JobFilter } from './jobs-repo.js';
import { documentsRepo } from './repo.js';

/** An upload already streamed to the file store, described by what was measured while reading. */
export interface StoredUpload {
  documentId: string;
  storageKey: string;
  title: string;
  category: string;
  docKey: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  contentHash: string;
}

export interface DocumentWithJob {
  document: KbDocumentRow;
  job: KbJobRow | null;
}

/** Where a new job goes to be run (the indexing worker). */
export interface JobSink {
  enqueue(job: Pick<KbJobRow, 'id' | 'runAfter'>): Promise<void>;
}

const documentNotFound = () => notFound('Document');

/**
 * Knowledge-base documents and their indexing jobs (spec 4.5, DECISIONS 6). Versions: a new upload
 * under a doc_key supersedes the current version, its chunks and its unfinished jobs, in one
 * transaction; the same content again changes nothing.
 */
export class KnowledgeService {
  constructor(
    private readonly db: Db,
    private readonly files: FileStore,
    private readonly vectors: VectorStore,
    private readonly audit: AuditService,
    private readonly jobs: JobSink,
    private readonly log: Logger,
    private readonly maxRetries: number,
    private readonly states: JobStateCounter,
    /** Called once a deletion has committed: cached search results may hold the document. */
    private readonly corpusChanged: () => Promise<void> = () => Promise.resolve(),
  ) {}

  /**
   * Records an upload. `created: false` when the doc_key's current version has the same content:
   * the stored copy is then removed and the existing document returned.
   */
  async register(
    actor: SelfActor,
    upload: StoredUpload,
    ctx: RequestContext,
  ): Promise<DocumentWithJob & { created: boolean }> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const result = await this.registerOnce(actor, upload, ctx);
        await this.afterRegister(upload, result);
        return result;
      } catch (err) {
        // Two first uploads of one doc_key at once: the loser retries and finds the winner.
        if (isUniqueViolation(err) && attempt < 3) continue;
        // Nothing recorded it: the stored original would be an orphan.
        await this.files.delete(upload.storageKey).catch(() => undefined);
        throw err;
      }
    }
  }

  private async registerOnce(actor: SelfActor, upload: StoredUpload, ctx: RequestContext) {
    return this.db.transaction(async (tx) => {
      const current = await documentsRepo.lockCurrent(tx, upload.docKey);
      if (current?.contentHash === upload.contentHash) {
        const job = (await jobsRepo.latestFor(tx, [current.id])).get(current.id) ?? null;
        return { document: current, job, created: false, superseded: null, supersededJobs: 0 };
      }
      const version = (await documentsRepo.lastVersion(tx, upload.docKey)) + 1;
      const { documentId, ...fields } = upload;
      // First, so the doc_key never has two current versions, not even inside the transaction.
      if (current !== undefined) await supersedeVersion(tx, current, documentId, version);
      const document = await documentsRepo.insert(tx, {
        ...fields,
        id: documentId,
        version,
        uploadedBy: actor.id,
      });
      const job = await jobsRepo.insert(tx, {
        id: randomUUID(),
        documentId,
        docKey: upload.docKey,
        maxRetries: this.maxRetries,
      });
      const supersededJobs =
        current === undefined
          ? 0
          : await jobsRepo.supersede(
              tx,
              await documentsRepo.unfinishedJobIds(tx, current.id),
              job.id,
            );
      const details = { doc_key: upload.docKey, version, size_bytes: upload.sizeBytes };
      await this.audit.append(tx, kbEvent('kb.document.uploaded', actor, documentId, details), ctx);
      const updated = current === undefined ? null : current.id;
      return { document, job, created: true, superseded: updated, supersededJobs };
    });
  }

  private async afterRegister(
    upload: StoredUpload,
    result: DocumentWithJob & {
      created: boolean;
      superseded: string | null;
      supersededJobs: number;
    },
  ): Promise<void> {
    if (!result.created) {
      await this.files.delete(upload.storageKey);
      return;
    }
    this.states.reached('superseded', result.supersededJobs);
    if (result.job !== null) {
      this.states.reached('pending');
      await this.jobs.enqueue(result.job);
    }
    // Superseded chunks are never returned (the database says so); dropping their vectors frees space.
    if (result.superseded !== null) {
      await this.vectors.deleteByDocument(result.superseded).catch((err: unknown) => {
        this.log.warn({ err, documentId: result.superseded }, 'vector clean-up failed');
      });
    }
  }

  async page(status: DocumentStatus | undefined, offset: number, limit: number) {
    const { rows, total } = await documentsRepo.page(this.db, status, offset, limit);
    const jobs = await jobsRepo.latestFor(
      this.db,
      rows.map((r) => r.id),
    );
    return {
      items: rows.map((document) => ({ document, job: jobs.get(document.id) ?? null })),
      total,
    };
  }

  async get(id: string): Promise<DocumentWithJob> {
    const document = await documentsRepo.find(this.db, id);
    if (document === undefined) throw documentNotFound();
    const job = (await jobsRepo.latestFor(this.db, [id])).get(id) ?? null;
    return { document, job };
  }

  /** Removes the document with its chunks and jobs, then its vectors and its stored original. */
  async delete(actor: SelfActor, id: string, ctx: RequestContext): Promise<void> {
    const removed = await this.db.transaction(async (tx) => {
      const row = await documentsRepo.delete(tx, id);
      if (row === undefined) throw documentNotFound();
      const details = { doc_key: row.docKey, version: row.version };
      await this.audit.append(tx, kbEvent('kb.document.deleted', actor, id, details), ctx);
      return row;
    });
    await this.corpusChanged();
    // The document is gone (its chunks with it, so search can no longer return it); what is
    // left elsewhere is clean-up, which must not turn a done deletion into an error.
    await Promise.all([
      this.vectors.deleteByDocument(id).catch((err: unknown) => {
        this.log.warn({ err, documentId: id }, 'vector clean-up failed');
      }),
      this.files.delete(removed.storageKey).catch((err: unknown) => {
        this.log.warn({ err, documentId: id }, 'stored original could not be removed');
      }),
    ]);
  }

  /** A new job for the document; its unfinished ones are superseded by it. */
  async reindex(actor: SelfActor, id: string, ctx: RequestContext): Promise<DocumentWithJob> {
    const result = await this.db.transaction(async (tx) => {
      const document = await documentsRepo.lock(tx, id);
      if (document === undefined) throw documentNotFound();
      if (document.supersededBy !== null) {
        throw conflict('A superseded version is never searched; reindex the current version');
      }
      const unfinished = await documentsRepo.unfinishedJobIds(tx, id);
      const job = await jobsRepo.insert(tx, {
        id: randomUUID(),
        documentId: id,
        docKey: document.docKey,
        maxRetries: this.maxRetries,
      });
      const supersededJobs = await jobsRepo.supersede(tx, unfinished, job.id);
      const updated = await documentsRepo.update(tx, id, { status: 'uploaded', error: null });
      await this.audit.append(tx, kbEvent('kb.document.reindexed', actor, id, {}), ctx);
      return { document: updated ?? document, job, supersededJobs };
    });
    this.states.reached('superseded', result.supersededJobs);
    this.states.reached('pending');
    await this.jobs.enqueue(result.job);
    return { document: result.document, job: result.job };
  }

  async jobsPage(filter: JobFilter, offset: number, limit: number) {
    return jobsRepo.page(this.db, filter, offset, limit);
  }

  async job(id: string): Promise<KbJobRow> {
    const job = await jobsRepo.find(this.db, id);
    if (job === undefined) throw notFound('Job');
    return job;
  }

  /** Runs a failed job again with a fresh set of automatic retries; only failed jobs (else 409). */
  async retry(actor: SelfActor, id: string, ctx: RequestContext): Promise<KbJobRow> {
    const job = await this.db.transaction(async (tx) => {
      const current = await jobsRepo.find(tx, id);
      if (current === undefined) throw notFound('Job');
      if (current.state !== 'failed') {
        throw new AppError(
          'CONFLICT',
          `Only failed jobs can be retried; this one is ${current.state}`,
        );
      }
      const updated = await jobsRepo.update(tx, id, {
        state: 'pending',
        retryCount: 0,
        runAfter: new Date(),
        finishedAt: null,
      });
      await documentsRepo.update(tx, current.documentId, { status: 'uploaded' });
      await this.audit.append(
        tx,
        kbEvent('kb.job.retried', actor, current.documentId, { job_id: id }),
        ctx,
      );
      return updated ?? current;
    });
    this.states.reached('pending');
    await this.jobs.enqueue(job);
    return job;
  }
}

/**
 * Supersedes the current version. One whose indexing had not finished ends `failed` (DECISIONS 6:
 * a terminal status, never `processing`): its jobs are superseded in the same transaction, and a
 * run still going finds that out and stops without touching the document again.
 */
async function supersedeVersion(
  tx: Db,
  current: KbDocumentRow,
  newerId: string,
  version: number,
): Promise<void> {
  await documentsRepo.supersede(tx, current.id, newerId);
  if (current.status === 'uploaded' || current.status === 'processing') {
    await documentsRepo.update(tx, current.id, {
      status: 'failed',
      error: `Superseded by version ${version} before its indexing finished`,
    });
  }
}

function kbEvent(
  action: string,
  actor: SelfActor,
  documentId: string,
  details: Record<string, unknown>,
) {
  return {
    action,
    success: true,
    actorId: actor.id,
    actorEmail: actor.email,
    resourceType: 'kb_document',
    resourceId: documentId,
    details,
  };
}
