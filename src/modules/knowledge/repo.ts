import type { Definition } from './definitions.js';
import { lexicalRepo } from './lexical/repo.js';
import { and, count, desc, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.js';
import {
  kbChunks,
  kbDefinitions,
  kbDocuments,
  kbIndexingJobs,
  type DocumentStatus,
  type KbDocumentRow,
} from '../../db/schema/index.js';

export type NewDocument = Omit<
  KbDocumentRow,
  | 'status'
  | 'supersededBy'
  | 'pageCount'
  | 'chunkCount'
  | 'error'
  | 'createdAt'
  | 'updatedAt'
  | 'indexedAt'
>;

export type DocumentPatch = Partial<
  Pick<KbDocumentRow, 'status' | 'pageCount' | 'chunkCount' | 'error' | 'indexedAt'>
>;

/** Knowledge-base document versions. */
export const documentsRepo = {
  async insert(tx: Db, row: NewDocument): Promise<KbDocumentRow> {
    const [created] = await tx.insert(kbDocuments).values(row).returning();
    if (created === undefined) throw new Error('insert returned no row');
    return created;
  },

  async find(db: Db, id: string): Promise<KbDocumentRow | undefined> {
    const [row] = await db.select().from(kbDocuments).where(eq(kbDocuments.id, id)).limit(1);
    return row;
  },

  /** The current version of a doc_key, locked until the transaction ends. */
  async lockCurrent(tx: Db, docKey: string): Promise<KbDocumentRow | undefined> {
    const [row] = await tx
      .select()
      .from(kbDocuments)
      .where(and(eq(kbDocuments.docKey, docKey), isNull(kbDocuments.supersededBy)))
      .for('update');
    return row;
  },

  async lock(tx: Db, id: string): Promise<KbDocumentRow | undefined> {
    const [row] = await tx.select().from(kbDocuments).where(eq(kbDocuments.id, id)).for('update');
    return row;
  },

  /** Newest first; superseded versions are listed too (they carry `superseded_by`). */
  async page(db: Db, status: DocumentStatus | undefined, offset: number, limit: number) {
    const where = status === undefined ? undefined : eq(kbDocuments.status, status);
    const [rows, [total]] = await Promise.all([
      db
        .select()
        .from(kbDocuments)
        .where(where)
        .orderBy(desc(kbDocuments.createdAt), desc(kbDocuments.id))
        .offset(offset)
        .limit(limit),
      db.select({ n: count() }).from(kbDocuments).where(where),
    ]);
    return { rows, total: total?.n ?? 0 };
  },

  async update(db: Db, id: string, patch: DocumentPatch): Promise<KbDocumentRow | undefined> {
    const [row] = await db
      .update(kbDocuments)
      .set({ ...patch, updatedAt: sql`now()` })
      .where(eq(kbDocuments.id, id))
      .returning();
    return row;
  },

  /**
   * Marks the document `processing` for its running job `jobId`; false (and nothing changed) when
   * the job is no longer running or the document was superseded meanwhile, which must stay as the
   * supersession left it.
   */
  async markProcessing(db: Db, id: string, jobId: string): Promise<boolean> {
    const rows = await db
      .update(kbDocuments)
      .set({ status: 'processing', error: null, updatedAt: sql`now()` })
      .where(
        and(
          eq(kbDocuments.id, id),
          isNull(kbDocuments.supersededBy),
          sql`exists (select 1 from ${kbIndexingJobs} where ${kbIndexingJobs.id} = ${jobId} and ${kbIndexingJobs.state} = 'running')`,
        ),
      )
      .returning({ id: kbDocuments.id });
    return rows.length > 0;
  },

  /** Updates the document unless it has been superseded; false when it has. */
  async updateCurrent(db: Db, id: string, patch: DocumentPatch): Promise<boolean> {
    const rows = await db
      .update(kbDocuments)
      .set({ ...patch, updatedAt: sql`now()` })
      .where(and(eq(kbDocuments.id, id), isNull(kbDocuments.supersededBy)))
      .returning({ id: kbDocuments.id });
    return rows.length > 0;
  },

  /** Marks `old` superseded by `newer`, with its chunks. */
  async supersede(tx: Db, oldId: string, newerId: string): Promise<void> {
    await tx
      .update(kbDocuments)
      .set({ supersededBy: newerId, updatedAt: sql`now()` })
      .where(eq(kbDocuments.id, oldId));
    await tx.update(kbChunks).set({ superseded: true }).where(eq(kbChunks.documentId, oldId));
    await lexicalRepo.recordChange(tx, { documentId: oldId });
  },

  async delete(tx: Db, id: string): Promise<KbDocumentRow | undefined> {
    const [row] = await tx.delete(kbDocuments).where(eq(kbDocuments.id, id)).returning();
    if (row !== undefined) await lexicalRepo.recordChange(tx, { documentId: id });
    return row;
  },

  /** The highest version a doc_key has had (deleted versions aside), 0 for a new key. */
  async lastVersion(tx: Db, docKey: string): Promise<number> {
    const [row] = await tx
      .select({ v: sql<number>`coalesce(max(${kbDocuments.version}), 0)::int` })
      .from(kbDocuments)
      .where(eq(kbDocuments.docKey, docKey));
    return row?.v ?? 0;
  },

  /** Activates one job's chunks and drops the document's others, in the caller's transaction. */
  async swapChunks(tx: Db, documentId: string, jobId: string): Promise<number> {
    await tx
      .delete(kbChunks)
      .where(and(eq(kbChunks.documentId, documentId), ne(kbChunks.jobId, jobId)));
    // Counted in the database: returning the ids would parse one row per chunk on this thread
    // (100,000 for a text file at the upload limit).
    const [row] = await queryRows<{ n: number }>(
      tx,
      sql`with activated as (
            update ${kbChunks} set active = true where ${kbChunks.jobId} = ${jobId} returning 1
          ) select count(*)::int as n from activated`,
    );
    await lexicalRepo.recordChange(tx, { documentId, keepJobId: jobId, addJobId: jobId });
    return row?.n ?? 0;
  },

  /** The document's glossary entries (definitions.ts), in place of those of its last job. */
  async replaceDefinitions(
    tx: Db,
    documentId: string,
    definitions: readonly Definition[],
  ): Promise<void> {
    await tx.delete(kbDefinitions).where(eq(kbDefinitions.documentId, documentId));
    if (definitions.length === 0) return;
    await tx
      .insert(kbDefinitions)
      .values(definitions.map((d) => ({ documentId, term: d.short, means: d.long, kind: d.kind })));
  },

  async deleteChunksOfJob(db: Db, jobId: string): Promise<void> {
    await db.delete(kbChunks).where(eq(kbChunks.jobId, jobId));
  },

  async insertChunks(db: Db, rows: (typeof kbChunks.$inferInsert)[]): Promise<void> {
    if (rows.length > 0) await db.insert(kbChunks).values(rows);
  },

  async unfinishedJobIds(tx: Db, documentId: string): Promise<string[]> {
    const rows = await tx
      .select({ id: kbIndexingJobs.id })
      .from(kbIndexingJobs)
      .where(
        and(
          eq(kbIndexingJobs.documentId, documentId),
          inArray(kbIndexingJobs.state, ['pending', 'running', 'failed']),
        ),
      );
    return rows.map((r) => r.id);
  },
};
