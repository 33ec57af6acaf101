import { sql } from 'drizzle-orm';
import { bigint, boolean, index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * Append-only, hash-chained audit log. `seq` orders the chain; `hash` covers every field of the
 * entry plus `prev_hash`. A trigger (migration 0001) refuses DELETE and every UPDATE except the
 * redaction of `actor_email` to its digest when an account is deleted; the digest is what the hash
 * covers, so redaction keeps the chain verifiable.
 */
export const auditLogs = pgTable(
  'audit_logs',
  {
    id: uuid('id').primaryKey(),
    seq: bigint('seq', { mode: 'number' }).notNull().unique(),
    timestamp: timestamp('timestamp', { withTimezone: true, mode: 'date' }).notNull(),
    action: text('action').notNull(),
    actorId: uuid('actor_id'),
    actorEmail: text('actor_email'),
    resourceType: text('resource_type'),
    resourceId: text('resource_id'),
    success: boolean('success').notNull(),
    ip: text('ip'),
    userAgent: text('user_agent'),
    requestId: text('request_id'),
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
  },
  // The admin panel's filters (migration 0008): the action index takes `text_pattern_ops`, so it
  // serves the exact filter and the prefix filter (`LIKE 'ehr.%'`) whatever the collation; the
  // subject-user filter (resource_type 'user') has a partial index of its own.
  (t) => [
    index('audit_logs_action_idx').on(t.action.op('text_pattern_ops'), t.seq),
    index('audit_logs_actor_idx').on(t.actorId, t.seq),
    index('audit_logs_timestamp_idx').on(t.timestamp),
    index('audit_logs_user_resource_idx')
      .on(t.resourceId, t.seq)
      .where(sql`${t.resourceType} = 'user'`),
  ],
);

export type AuditRow = typeof auditLogs.$inferSelect;
