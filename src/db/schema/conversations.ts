import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  foreignKey,
  index,
  integer,
  json,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import type { CitationDto, ToolCallDto, UsageDto } from '../../modules/conversations/schema.js';
import { users } from './users.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const MESSAGE_ROLES = ['user', 'assistant', 'system', 'tool'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

export const conversations = pgTable(
  'conversations',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    archived: boolean('archived').notNull().default(false),
    folderId: text('folder_id'),
    /** Messages across every branch (DECISIONS 3). */
    messageCount: integer('message_count').notNull().default(0),
    /** The last message sequence number handed out; orders every thread of the conversation. */
    lastSeq: integer('last_seq').notNull().default(0),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('conversations_user_updated_idx').on(
      t.userId,
      t.updatedAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
    index('conversations_user_archived_updated_idx').on(
      t.userId,
      t.archived,
      t.updatedAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
    index('conversations_user_folder_updated_idx')
      .on(t.userId, t.folderId, t.updatedAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.folderId} is not null`),
    // The admin panel's "conversations started today".
    index('conversations_created_at_idx').on(t.createdAt),
  ],
);

/**
 * How many conversations a user has per (archived, folder), kept by a trigger on `conversations`,
 * so a page's `total` is a sum over a handful of rows rather than a count over every conversation.
 * `folder_key` is the folder id, or '' for none (folder ids are never empty).
 */
export const conversationCounts = pgTable(
  'conversation_counts',
  {
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    archived: boolean('archived').notNull(),
    folderKey: text('folder_key').notNull(),
    n: integer('n').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.archived, t.folderKey] })],
);

/**
 * A branch of a conversation: `main`, or a UUID for a fork. A fork records where it starts: the
 * message it follows, the branch holding that message and the message's sequence number, so the
 * whole thread is read by walking up the (few) ancestor branches, never message by message.
 */
export const branches = pgTable(
  'branches',
  {
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    id: text('id').notNull(),
    parentMessageId: uuid('parent_message_id'),
    parentBranchId: text('parent_branch_id'),
    parentSeq: integer('parent_seq'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.conversationId, t.id] }),
    check(
      'branches_fork_point_check',
      sql`(${t.parentMessageId} is null) = (${t.parentBranchId} is null)
        and (${t.parentBranchId} is null) = (${t.parentSeq} is null)`,
    ),
  ],
);

export const messages = pgTable(
  'messages',
  {
    id: uuid('id').primaryKey(),
    conversationId: uuid('conversation_id').notNull(),
    branchId: text('branch_id').notNull(),
    /** Position in the conversation: increasing in the order messages were appended. */
    seq: integer('seq').notNull(),
    parentMessageId: uuid('parent_message_id'),
    role: text('role', { enum: MESSAGE_ROLES }).notNull(),
    content: text('content').notNull(),
    citations: json('citations').$type<CitationDto[]>().notNull().default([]),
    toolCalls: json('tool_calls').$type<ToolCallDto[]>().notNull().default([]),
    clientMessageId: text('client_message_id'),
    interrupted: boolean('interrupted').notNull().default(false),
    /** The model's token counts for an answer (null when it reported none); read back whole. */
    usage: json('usage').$type<UsageDto>(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    foreignKey({
      columns: [t.conversationId, t.branchId],
      foreignColumns: [branches.conversationId, branches.id],
      name: 'messages_branch_fk',
    }).onDelete('cascade'),
    uniqueIndex('messages_conversation_seq_key').on(t.conversationId, t.seq),
    index('messages_thread_idx').on(t.conversationId, t.branchId, t.seq),
    uniqueIndex('messages_client_id_key')
      .on(t.conversationId, t.branchId, t.clientMessageId)
      .where(sql`${t.clientMessageId} is not null`),
    check('messages_role_check', sql`${t.role} in ('user', 'assistant', 'system', 'tool')`),
  ],
);

export type ConversationRow = typeof conversations.$inferSelect;
export type BranchRow = typeof branches.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;
