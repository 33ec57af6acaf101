import {
  asc,
  eq,
  gt,
  gte,
  inArray,
  lte,
  or,
  sql,
  desc,
  and,
  not,
  like,
  count,
  type SQL,
} from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { auditLogs, type AuditRow } from '../../db/schema/index.js';
import type { AuditFilter } from './schema.js';

/** `_`, `%` and the escape character itself taken literally in a LIKE pattern. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The filter as one condition. Each part has an index (migrations 0000 and 0008): the action
 * (exact and prefix: `text_pattern_ops`, so `LIKE 'ehr.%'` is a range scan whatever the
 * collation), the actor, the subject user (partial index on resource_id where resource_type is
 * 'user'; the literal 'user' lets the planner match it), the timestamp.
 */
function whereOf(f: AuditFilter): SQL | undefined {
  const action =
    f.action === undefined
      ? undefined
      : 'exact' in f.action
        ? eq(auditLogs.action, f.action.exact)
        : like(auditLogs.action, `${likeLiteral(f.action.prefix)}%`);
  const user =
    f.userId === undefined
      ? undefined
      : or(
          eq(auditLogs.actorId, f.userId),
          and(sql`${auditLogs.resourceType} = 'user'`, eq(auditLogs.resourceId, f.userId)),
        );
  return and(
    action,
    user,
    f.since === undefined ? undefined : gte(auditLogs.timestamp, f.since),
    f.until === undefined ? undefined : lte(auditLogs.timestamp, f.until),
  );
}

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

  /** A page of the filtered entries, newest first. */
  async list(db: Db, filter: AuditFilter, offset: number, limit: number): Promise<AuditRow[]> {
    return db
      .select()
      .from(auditLogs)
      .where(whereOf(filter))
      .orderBy(desc(auditLogs.seq))
      .limit(limit)
      .offset(offset);
  },

  async count(db: Db, filter: AuditFilter): Promise<number> {
    const [row] = await db.select({ n: count() }).from(auditLogs).where(whereOf(filter));
    return row?.n ?? 0;
  },

  /** The filtered entries with seq in (afterSeq, upTo], oldest first (keyset: no offset). */
  async exportPage(
    db: Db,
    filter: AuditFilter,
    range: { afterSeq: number; upTo: number },
    limit: number,
  ): Promise<AuditRow[]> {
    return db
      .select()
      .from(auditLogs)
      .where(
        and(whereOf(filter), gt(auditLogs.seq, range.afterSeq), lte(auditLogs.seq, range.upTo)),
      )
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
