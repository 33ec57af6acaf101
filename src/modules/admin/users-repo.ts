import { and, count, desc, eq, inArray, or, sql, type SQL } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.js';
import {
  auditLogs,
  conversations,
  userLocks,
  users,
  type AuditRow,
  type UserLockRow,
  type UserRow,
} from '../../db/schema/index.js';
import { HISTORY_LIMIT, type Statistics } from './users-schema.js';

export const ROLE_ACTIONS = ['user.promoted', 'user.demoted'] as const;
export const ACTIVATION_ACTIONS = ['user.deactivated', 'user.activated'] as const;

export interface SummaryCounts {
  users_total: number;
  users_active: number;
  users_admins: number;
  conversations_total: number;
  conversations_today: number;
}

export type UserWithStats = Statistics & { user: UserRow };

/**
 * Users with their conversation and message counts: one lateral aggregate per user over the
 * conversations index on user_id (message counts are kept on each conversation), so a page is one
 * statement, and a user without conversations counts zero.
 */
function withStats(db: Db) {
  const stats = db
    .select({
      conversations: sql<number>`count(*)::int`.as('conversations'),
      messages: sql<number>`coalesce(sum(${conversations.messageCount}), 0)::int`.as('messages'),
    })
    .from(conversations)
    .where(eq(conversations.userId, users.id))
    .as('stats');
  return db
    .select({ user: users, conversations: stats.conversations, messages: stats.messages })
    .from(users)
    .leftJoinLateral(stats, sql`true`);
}

const aboutUser = (userId: string) =>
  and(
    eq(auditLogs.resourceType, 'user'),
    eq(auditLogs.resourceId, userId),
    eq(auditLogs.success, true),
  );

const roleEntriesOf = (userId: string) =>
  or(
    and(inArray(auditLogs.action, [...ROLE_ACTIONS]), aboutUser(userId)),
    and(eq(auditLogs.action, 'auth.register'), eq(auditLogs.actorId, userId), aboutUser(userId)),
  );

const activationEntriesOf = (userId: string) =>
  and(inArray(auditLogs.action, [...ACTIVATION_ACTIONS]), aboutUser(userId));

async function countWhere(
  db: Db,
  table: typeof auditLogs | typeof userLocks,
  where: SQL | undefined,
): Promise<number> {
  const [row] = await db.select({ n: count() }).from(table).where(where);
  return row?.n ?? 0;
}

export const panelUsersRepo = {
  /** A page of users, newest first, each with their statistics. */
  async pageWithStats(db: Db, offset: number, limit: number): Promise<UserWithStats[]> {
    return withStats(db).orderBy(desc(users.createdAt), desc(users.id)).offset(offset).limit(limit);
  },

  async oneWithStats(db: Db, id: string): Promise<UserWithStats | undefined> {
    const [row] = await withStats(db).where(eq(users.id, id)).limit(1);
    return row;
  },

  /** The dashboard's counts in one statement; the total of conversations from their counts table. */
  async summaryCounts(db: Db, todayStart: Date): Promise<SummaryCounts> {
    const [row] = await queryRows<SummaryCounts>(
      db,
      sql`select count(*)::int as users_total,
          count(*) filter (where ${users.isActive})::int as users_active,
          count(*) filter (where ${users.adminRole} = 'admin')::int as users_admins,
          (select coalesce(sum(n), 0)::int from conversation_counts) as conversations_total,
          (select count(*)::int from conversations
            where created_at >= ${todayStart.toISOString()}::timestamptz) as conversations_today
        from ${users}`,
    );
    if (row === undefined) throw new Error('aggregate returned no row');
    return row;
  },

  /** Role changes about the user and their registration (by themselves), newest first. */
  async roleEntries(db: Db, userId: string): Promise<AuditRow[]> {
    return db
      .select()
      .from(auditLogs)
      .where(roleEntriesOf(userId))
      .orderBy(desc(auditLogs.seq))
      .limit(HISTORY_LIMIT);
  },

  /** How many role entries `roleEntries` reads from, without its limit. */
  async countRoleEntries(db: Db, userId: string): Promise<number> {
    return countWhere(db, auditLogs, roleEntriesOf(userId));
  },

  /** Deactivations and reactivations of the user, newest first. */
  async activationEntries(db: Db, userId: string): Promise<AuditRow[]> {
    return db
      .select()
      .from(auditLogs)
      .where(activationEntriesOf(userId))
      .orderBy(desc(auditLogs.seq))
      .limit(HISTORY_LIMIT);
  },

  /** Login lockouts of the user, newest first. */
  async lockouts(db: Db, userId: string): Promise<UserLockRow[]> {
    return db
      .select()
      .from(userLocks)
      .where(eq(userLocks.userId, userId))
      .orderBy(desc(userLocks.lockedAt))
      .limit(HISTORY_LIMIT);
  },

  /** How many lockouts, deactivations and reactivations the user has, without a limit. */
  async countLockReasons(db: Db, userId: string): Promise<number> {
    const [locks, entries] = await Promise.all([
      countWhere(db, userLocks, eq(userLocks.userId, userId)),
      countWhere(db, auditLogs, activationEntriesOf(userId)),
    ]);
    return locks + entries;
  },

  async exists(db: Db, id: string): Promise<boolean> {
    const rows = await db.select({ id: users.id }).from(users).where(eq(users.id, id)).limit(1);
    return rows.length > 0;
  },
};
