import { and, asc, desc, gt, inArray, lt, lte, sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.js';
import {
  auditCheckpoints,
  auditLogs,
  auditTombstones,
  type AuditCheckpointRow,
  type AuditTombstoneRow,
} from '../../db/schema/index.js';
import type { ExpiringFamily } from './families.js';
import type { TombstoneFields } from './checkpoint.js';

/** Taken (without waiting) by the purge: one instance purges at a time, the others skip. */
const AUDIT_PURGE_LOCK = 774_201_003;

/** An expired entry as the purge reads it: what its tombstone keeps, and its family. */
export type ExpiredEntry = TombstoneFields & { family: ExpiringFamily };

/** Queries of the retention purge and of chain verification across purged entries. */
export const retentionRepo = {
  async tryLock(tx: Db): Promise<boolean> {
    const [row] = await queryRows<{ locked: boolean }>(
      tx,
      sql`select pg_try_advisory_xact_lock(${AUDIT_PURGE_LOCK}) as locked`,
    );
    return row?.locked === true;
  },

  async tombstonesAfter(db: Db, afterSeq: number, limit: number): Promise<AuditTombstoneRow[]> {
    return db
      .select()
      .from(auditTombstones)
      .where(gt(auditTombstones.seq, afterSeq))
      .orderBy(asc(auditTombstones.seq))
      .limit(limit);
  },

  /** Every checkpoint, oldest first (a few a day at most: each is one purge that removed some). */
  async checkpoints(db: Db): Promise<AuditCheckpointRow[]> {
    return db.select().from(auditCheckpoints).orderBy(asc(auditCheckpoints.throughSeq));
  },

  async newestCheckpoint(db: Db): Promise<AuditCheckpointRow | undefined> {
    const [row] = await db
      .select()
      .from(auditCheckpoints)
      .orderBy(desc(auditCheckpoints.throughSeq))
      .limit(1);
    return row;
  },

  /**
   * One family's entries stamped before `cutoff` and no later than `upToSeq` in the chain, oldest
   * first: a range of the family index of migration 0010 (the expression must stay as written
   * there for the planner to use it).
   */
  async expired(
    tx: Db,
    family: ExpiringFamily,
    cutoff: Date,
    upToSeq: number,
    limit: number,
  ): Promise<ExpiredEntry[]> {
    const rows = await tx
      .select({
        seq: auditLogs.seq,
        id: auditLogs.id,
        timestamp: auditLogs.timestamp,
        action: auditLogs.action,
        prevHash: auditLogs.prevHash,
        hash: auditLogs.hash,
      })
      .from(auditLogs)
      .where(
        and(
          sql`audit_family(${auditLogs.action}, ${auditLogs.success}) = ${family}`,
          lt(auditLogs.timestamp, cutoff),
          lte(auditLogs.seq, upToSeq),
        ),
      )
      .orderBy(asc(auditLogs.timestamp))
      .limit(limit);
    return rows.map((r) => ({ ...r, family }));
  },

  async insertCheckpoint(tx: Db, row: AuditCheckpointRow): Promise<void> {
    await tx.insert(auditCheckpoints).values(row);
  },

  /** The tombstones, copied from the entries themselves so that they match them exactly. */
  async copyTombstones(tx: Db, seqs: number[], checkpointId: string): Promise<void> {
    await tx.execute(sql`
      insert into audit_tombstones (seq, id, timestamp, action, prev_hash, hash, checkpoint_id)
      select seq, id, timestamp, action, prev_hash, hash, ${checkpointId}::uuid
      from audit_logs where ${inArray(auditLogs.seq, seqs)}`);
  },

  /**
   * Deletes entries that have their tombstone: the one DELETE the guard of migration 0010 lets
   * through, and only while `audit.purge` is on, which lasts for this statement alone.
   */
  async deleteTombstoned(tx: Db, seqs: number[]): Promise<number> {
    await tx.execute(sql`select set_config('audit.purge', 'on', true)`);
    const deleted = await tx
      .delete(auditLogs)
      .where(inArray(auditLogs.seq, seqs))
      .returning({ seq: auditLogs.seq });
    await tx.execute(sql`select set_config('audit.purge', 'off', true)`);
    return deleted.length;
  },
};
