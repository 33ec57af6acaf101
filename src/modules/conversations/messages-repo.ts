import { and, asc, count, eq, max, sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.js';
import { branches, conversations, messages, type BranchRow } from '../../db/schema/index.js';
import type { StoredMessage } from './schema.js';
import {
  MESSAGE_COLUMNS,
  threadQuery,
  toStored,
  type RawMessage,
  type ThreadPage,
} from './thread-query.js';

export type NewMessage = Omit<StoredMessage, 'createdAt'>;

/** How `append` went (see migration 0013, `append_message`). */
export type AppendOutcome = 'created' | 'existing' | 'no conversation' | 'no branch';

/** Where a fork starts: the message, its branch and its position. */
export interface ForkPoint {
  lastSeq: number;
  messageBranchId: string | null;
  messageSeq: number | null;
}

export interface BranchSummary extends BranchRow {
  messageCount: number;
  lastMessageAt: Date | null;
}

export const messagesRepo = {
  /**
   * Appends `message` to the end of its branch in one statement (`append_message`, migration
   * 0013): the user's conversation row is locked (appends to one conversation run one at a time,
   * which keeps `seq`, `messageCount` and the parent links right), the branch read after the lock,
   * and the message stored with the next `seq`, after the branch's last message unless
   * `parentMessageId` is given. The branch's message already stored under the same client message
   * id is returned instead, as `existing`; nothing when the conversation is not the user's or
   * lacks the branch. A created message gives an untitled conversation `title`, if any.
   */
  async append(
    db: Db,
    userId: string,
    message: Omit<NewMessage, 'seq' | 'parentMessageId'> & { parentMessageId: string | null },
    title: string | null,
  ): Promise<{ outcome: AppendOutcome; message: StoredMessage | undefined }> {
    const m = message;
    const [row] = await queryRows<{ outcome: AppendOutcome } & RawMessage>(
      db,
      sql`select r.outcome, ${MESSAGE_COLUMNS}
        from append_message(${userId}::uuid, ${m.conversationId}::uuid, ${m.branchId},
          ${m.clientMessageId}, ${m.id}::uuid, ${m.parentMessageId}::uuid, ${m.role}, ${m.content},
          ${JSON.stringify(m.citations)}::json, ${JSON.stringify(m.toolCalls)}::json,
          ${m.interrupted}, ${m.usage === null ? null : JSON.stringify(m.usage)}::json,
          ${title}) as r
        cross join lateral (select (r.message).*) as m`,
    );
    if (row === undefined) throw new Error('append_message returned no row');
    const found = row.outcome === 'created' || row.outcome === 'existing';
    return { outcome: row.outcome, message: found ? toStored(row) : undefined };
  },

  /**
   * Whether the user's conversation has the branch, and the message stored on it under the client
   * message id. Nothing when the conversation is not the user's.
   */
  async sendTarget(
    db: Db,
    userId: string,
    conversationId: string,
    branchId: string,
    clientMessageId: string | null,
  ): Promise<{ branchExists: boolean; existing: StoredMessage | null } | undefined> {
    const [row] = await db
      .select({ branchId: branches.id, existing: messages })
      .from(conversations)
      .leftJoin(
        branches,
        and(eq(branches.conversationId, conversations.id), eq(branches.id, branchId)),
      )
      .leftJoin(
        messages,
        and(
          eq(messages.conversationId, conversations.id),
          eq(messages.branchId, branchId),
          clientMessageId === null ? sql`false` : eq(messages.clientMessageId, clientMessageId),
        ),
      )
      .where(and(eq(conversations.id, conversationId), eq(conversations.userId, userId)))
      .limit(1);
    return row === undefined
      ? undefined
      : { branchExists: row.branchId !== null, existing: row.existing };
  },

  /** Locks the user's conversation row and finds a message of it to fork from. */
  async lockForFork(
    tx: Db,
    userId: string,
    conversationId: string,
    messageId: string,
  ): Promise<ForkPoint | undefined> {
    const [row] = await queryRows<ForkPoint>(
      tx,
      sql`select c.last_seq as "lastSeq", m.branch_id as "messageBranchId",
          m.seq as "messageSeq"
        from conversations c
        left join messages m on m.id = ${messageId} and m.conversation_id = c.id
        where c.id = ${conversationId} and c.user_id = ${userId}
        for update of c`,
    );
    return row;
  },

  /** Stores the message and counts it on the conversation, whose row lock the caller holds. */
  async insert(tx: Db, message: NewMessage): Promise<StoredMessage> {
    const [row] = await tx
      .insert(messages)
      .values({ ...message, createdAt: sql`clock_timestamp()` })
      .returning();
    if (row === undefined) throw new Error('insert returned no row');
    await tx
      .update(conversations)
      .set({
        messageCount: sql`${conversations.messageCount} + 1`,
        lastSeq: message.seq,
        updatedAt: row.createdAt,
      })
      .where(eq(conversations.id, message.conversationId));
    return row;
  },

  async insertBranch(
    tx: Db,
    branch: Pick<
      BranchRow,
      'conversationId' | 'id' | 'parentMessageId' | 'parentBranchId' | 'parentSeq'
    >,
  ): Promise<BranchRow> {
    const [row] = await tx
      .insert(branches)
      .values({ ...branch, createdAt: sql`clock_timestamp()` })
      .returning();
    if (row === undefined) throw new Error('insert returned no row');
    return row;
  },

  async touch(tx: Db, conversationId: string, at: Date): Promise<void> {
    await tx
      .update(conversations)
      .set({ updatedAt: at })
      .where(eq(conversations.id, conversationId));
  },

  /** A message of any conversation `userId` owns. */
  async findOwned(db: Db, userId: string, id: string): Promise<StoredMessage | undefined> {
    const [row] = await db
      .select({ message: messages })
      .from(messages)
      .innerJoin(conversations, eq(conversations.id, messages.conversationId))
      .where(and(eq(messages.id, id), eq(conversations.userId, userId)))
      .limit(1);
    return row?.message;
  },

  /** The message stored right after `id` on its branch (an answer to a user message). */
  async next(db: Db, message: StoredMessage): Promise<StoredMessage | undefined> {
    const [row] = await db
      .select()
      .from(messages)
      .where(
        and(
          eq(messages.conversationId, message.conversationId),
          eq(messages.branchId, message.branchId),
          eq(messages.parentMessageId, message.id),
        ),
      )
      .orderBy(asc(messages.seq))
      .limit(1);
    return row;
  },

  /** Every branch of the conversation with its own message count, `main` first, then by age. */
  async branches(db: Db, conversationId: string): Promise<BranchSummary[]> {
    return db
      .select({
        conversationId: branches.conversationId,
        id: branches.id,
        parentMessageId: branches.parentMessageId,
        parentBranchId: branches.parentBranchId,
        parentSeq: branches.parentSeq,
        createdAt: branches.createdAt,
        messageCount: count(messages.id),
        lastMessageAt: max(messages.createdAt),
      })
      .from(branches)
      .leftJoin(
        messages,
        and(
          eq(messages.conversationId, branches.conversationId),
          eq(messages.branchId, branches.id),
        ),
      )
      .where(eq(branches.conversationId, conversationId))
      .groupBy(branches.conversationId, branches.id)
      .orderBy(sql`${branches.id} <> 'main'`, asc(branches.createdAt), asc(branches.id));
  },

  /**
   * The newest `limit` messages of a branch's thread (older than the message `before`, when
   * given), newest first, with the length of the whole thread. One prepared statement (see
   * `threadQuery`). `found` is false when the conversation is not the user's or has no such
   * branch; `beforeFound` is false when `before` is not on the thread.
   */
  async thread(
    db: Db,
    userId: string,
    conversationId: string,
    branchId: string,
    limit: number,
    before: string | null,
  ): Promise<ThreadPage> {
    const rows = await threadQuery(db)({ conversationId, userId, branchId, before, limit });
    const first = rows[0];
    return {
      found: first?.found ?? false,
      beforeFound: before === null || (first?.beforeFound ?? false),
      total: first?.total ?? 0,
      // The statement leaves the order to this sort (of rows it returns nearly in order).
      rows: rows.flatMap((r) => (r.id === null ? [] : [toStored(r)])).sort((a, b) => b.seq - a.seq),
    };
  },

  async branchExists(db: Db, conversationId: string, branchId: string): Promise<boolean> {
    const [row] = await db
      .select({ id: branches.id })
      .from(branches)
      .where(and(eq(branches.conversationId, conversationId), eq(branches.id, branchId)))
      .limit(1);
    return row !== undefined;
  },
};
