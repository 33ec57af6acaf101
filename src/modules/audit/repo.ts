import { asc, eq, gt, inArray, or, sql, desc, and, not, like } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { auditLogs, type AuditRow } from '../../db/schema/index.js';

/** Any constant shared by every writer: serialises appends so the chain never forks. */
const AUDIT_CHAIN_LOCK = 774_201_002;

export const auditRepo = {
  async lockChain(tx: Db): Promise<void> {
    await tx.execute(sql`select pg_advisory_xact_lock(${AUDIT_CHAIN_LOCK})`);
  },

  async last(tx: Db): Promise<{ seq: number; hash: string } | undefined> {
    const [row] = await tx
      .select({ seq: auditLogs.seq, hash: auditLogs.hash })
      .from(auditLogs)
      .orderBy(desc(auditLogs.seq))
      .limit(1);
    return row;
  },

  async insert(tx: Db, row: AuditRow): Promise<void> {
    await tx.insert(auditLogs).values(row);
  },

  async pageAfter(db: Db, afterSeq: number, limit: number): Promise<AuditRow[]> {
    return db
      .select()
      .from(auditLogs)
      .where(gt(auditLogs.seq, afterSeq))
      .orderBy(asc(auditLogs.seq))
      .limit(limit);
  },

  /** The latest successful role change (`user.promoted` or `user.demoted`) of a user, if any. */
  async lastRoleChange(db: Db, userId: string): Promise<string | undefined> {
    const [row] = await db
      .select({ action: auditLogs.action })
      .from(auditLogs)
      .where(
        and(
          inArray(auditLogs.action, ['user.promoted', 'user.demoted']),
          eq(auditLogs.resourceType, 'user'),
          eq(auditLogs.resourceId, userId),
          eq(auditLogs.success, true),
        ),
      )
      .orderBy(desc(auditLogs.seq))
      .limit(1);
    return row?.action;
  },

  /** Replaces the email of every entry by or about this user with its digest. */
  async redactEmail(tx: Db, userId: string, email: string): Promise<void> {
    await tx
      .update(auditLogs)
      .set({
        actorEmail: sql`'sha256:' || encode(sha256(convert_to(${auditLogs.actorEmail}, 'UTF8')), 'hex')`,
      })
      .where(
        and(
          or(eq(auditLogs.actorId, userId), sql`lower(${auditLogs.actorEmail}) = lower(${email})`),
          not(like(auditLogs.actorEmail, 'sha256:%')),
        ),
      );
  },
};
