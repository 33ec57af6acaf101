import { and, count, desc, eq, inArray, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { kbIndexingJobs, type JobState, type KbJobRow } from '../../db/schema/index.js';

export interface JobFilter {
  state?: JobState | undefined;
  docKey?: string | undefined;
}

/** Indexing jobs: the source of truth for what is to be done, whichever runner does it. */
export const jobsRepo = {
  async insert(
    tx: Db,
    row: Pick<KbJobRow, 'id' | 'documentId' | 'docKey' | 'maxRetries'>,
  ): Promise<KbJobRow> {
    const [created] = await tx.insert(kbIndexingJobs).values(row).returning();
    if (created === undefined) throw new Error('insert returned no row');
    return created;
  },

  async find(db: Db, id: string): Promise<KbJobRow | undefined> {
    const [row] = await db.select().from(kbIndexingJobs).where(eq(kbIndexingJobs.id, id)).limit(1);
    return row;
  },

  /** The latest job of each document. */
  async latestFor(db: Db, documentIds: readonly string[]): Promise<Map<string, KbJobRow>> {
    if (documentIds.length === 0) return new Map();
    const rows = await db
      .selectDistinctOn([kbIndexingJobs.documentId])
      .from(kbIndexingJobs)
      .where(inArray(kbIndexingJobs.documentId, [...documentIds]))
      .orderBy(kbIndexingJobs.documentId, desc(kbIndexingJobs.createdAt), desc(kbIndexingJobs.id));
    return new Map(rows.map((r) => [r.documentId, r]));
  },

  async page(db: Db, filter: JobFilter, offset: number, limit: number) {
    const conditions: SQL[] = [
      ...(filter.state === undefined ? [] : [eq(kbIndexingJobs.state, filter.state)]),
      ...(filter.docKey === undefined ? [] : [eq(kbIndexingJobs.docKey, filter.docKey)]),
    ];
    const where = and(...conditions);
    const [rows, [total]] = await Promise.all([
      db
        .select()
        .from(kbIndexingJobs)
        .where(where)
        .orderBy(desc(kbIndexingJobs.createdAt), desc(kbIndexingJobs.id))
        .offset(offset)
        .limit(limit),
      db.select({ n: count() }).from(kbIndexingJobs).where(where),
    ]);
    return { rows, total: total?.n ?? 0 };
  },

  /**
   * Takes the job for one runner: a due pending job, or a running one whose runner stopped
   * renewing its lease (its process died). Nothing when another runner has it or it is done.
   */
  async claim(db: Db, id: string, leaseMs: number): Promise<KbJobRow | undefined> {
    const [row] = await db
      .update(kbIndexingJobs)
      .set({
        state: 'running',
        leaseUntil: sql`now() + make_interval(secs => ${leaseMs / 1000})`,
        startedAt: sql`now()`,
        updatedAt: sql`now()`,
        processedChunks: 0,
        totalChunks: null,
      })
      .where(and(eq(kbIndexingJobs.id, id), claimable()))
      .returning();
    return row;
  },

  /** Extends the lease while the runner works; false when the job is no longer its own. */
  async renew(db: Db, id: string, leaseMs: number): Promise<boolean> {
    const rows = await db
      .update(kbIndexingJobs)
      .set({ leaseUntil: sql`now() + make_interval(secs => ${leaseMs / 1000})` })
      .where(and(eq(kbIndexingJobs.id, id), eq(kbIndexingJobs.state, 'running')))
      .returning({ id: kbIndexingJobs.id });
    return rows.length > 0;
  },

  /** Whether the job is still running (not superseded, deleted or finished). */
  async isRunning(db: Db, id: string): Promise<boolean> {
    const rows = await db
      .select({ id: kbIndexingJobs.id })
      .from(kbIndexingJobs)
      .where(and(eq(kbIndexingJobs.id, id), eq(kbIndexingJobs.state, 'running')))
      .limit(1);
    return rows.length > 0;
  },

  /** Updates a running job; false when it is no longer running (superseded, deleted). */
  async updateRunning(db: Db, id: string, patch: Partial<KbJobRow>): Promise<boolean> {
    const rows = await db
      .update(kbIndexingJobs)
      .set({ ...patch, updatedAt: sql`now()` })
      .where(and(eq(kbIndexingJobs.id, id), eq(kbIndexingJobs.state, 'running')))
      .returning({ id: kbIndexingJobs.id });
    return rows.length > 0;
  },

  async update(db: Db, id: string, patch: Partial<KbJobRow>): Promise<KbJobRow | undefined> {
    const [row] = await db
      .update(kbIndexingJobs)
      .set({ ...patch, updatedAt: sql`now()` })
      .where(eq(kbIndexingJobs.id, id))
      .returning();
    return row;
  },

  /** Marks the jobs superseded by `by`; the number of jobs it changed. */
  async supersede(tx: Db, ids: readonly string[], by: string): Promise<number> {
    if (ids.length === 0) return 0;
    const rows = await tx
      .update(kbIndexingJobs)
      .set({ state: 'superseded', supersededBy: by, leaseUntil: null, updatedAt: sql`now()` })
      .where(inArray(kbIndexingJobs.id, [...ids]))
      .returning({ id: kbIndexingJobs.id });
    return rows.length;
  },

  /** Makes every running job claimable again (their runner is known to be gone). */
  async expireLeases(db: Db): Promise<void> {
    await db
      .update(kbIndexingJobs)
      .set({ leaseUntil: sql`now()` })
      .where(eq(kbIndexingJobs.state, 'running'));
  },

  /**
   * Jobs a runner should look at now: due pending ones and running ones with a lapsed lease, each
   * with the moment it became due (`run_after`, or the end of the lapsed lease).
   */
  async due(db: Db, limit: number): Promise<{ id: string; dueAt: Date }[]> {
    const rows = await db
      .select({
        id: kbIndexingJobs.id,
        state: kbIndexingJobs.state,
        runAfter: kbIndexingJobs.runAfter,
        leaseUntil: kbIndexingJobs.leaseUntil,
      })
      .from(kbIndexingJobs)
      .where(claimable())
      .orderBy(kbIndexingJobs.runAfter)
      .limit(limit);
    return rows.map((r) => ({
      id: r.id,
      dueAt: r.state === 'running' && r.leaseUntil !== null ? r.leaseUntil : r.runAfter,
    }));
  },
};

function claimable(): SQL | undefined {
  return or(
    and(eq(kbIndexingJobs.state, 'pending'), lte(kbIndexingJobs.runAfter, sql`now()`)),
    and(eq(kbIndexingJobs.state, 'running'), lte(kbIndexingJobs.leaseUntil, sql`now()`)),
  );
}
