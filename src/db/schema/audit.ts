import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';

/**
 * Append-only, hash-chained audit log. `seq` orders the chain; `hash` covers every field of the
 * entry plus `prev_hash`. A trigger (migration 0001) refuses DELETE and every UPDATE except the
 * redaction of `actor_email` to its digest when an account is deleted; the digest is what the hash
 * covers, so redaction keeps the chain verifiable. Since migration 0010 it also lets the retention
 * purge delete an expired entry that has its tombstone (`audit_tombstones`); that migration adds,
 * in SQL only, the function `audit_family(action, success)` and an index on it and `timestamp`.
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

/**
 * A signed checkpoint of the chain, written by the retention purge (migration 0010) before it
 * removes expired entries: the chain's head (`through_seq`, `through_hash`) and a digest of the
 * tombstones it leaves, under an HMAC the database does not hold. Never changed once written.
 */
export const auditCheckpoints = pgTable('audit_checkpoints', {
  id: uuid('id').primaryKey(),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  throughSeq: bigint('through_seq', { mode: 'number' }).notNull(),
  throughHash: text('through_hash').notNull(),
  /** Entries purged per family, `{ ehr, session, error }`. */
  purged: jsonb('purged').$type<Record<string, number>>().notNull(),
  /** Each family's cutoff: entries stamped before it had expired. ISO instants. */
  cutoffs: jsonb('cutoffs').$type<Record<string, string>>().notNull(),
  tombstoneCount: integer('tombstone_count').notNull(),
  tombstonesDigest: text('tombstones_digest').notNull(),
  keyId: text('key_id').notNull(),
  signature: text('signature').notNull(),
});

export type AuditCheckpointRow = typeof auditCheckpoints.$inferSelect;

/**
 * What is left of a purged entry: its place in the chain and its hash, no personal data (no
 * actor, address, user agent, resource or details), so the links can be followed across the gap.
 */
export const auditTombstones = pgTable('audit_tombstones', {
  seq: bigint('seq', { mode: 'number' }).primaryKey(),
  id: uuid('id').notNull(),
  timestamp: timestamp('timestamp', { withTimezone: true, mode: 'date' }).notNull(),
  action: text('action').notNull(),
  prevHash: text('prev_hash').notNull(),
  hash: text('hash').notNull(),
  checkpointId: uuid('checkpoint_id')
    .notNull()
    .references(() => auditCheckpoints.id),
});

export type AuditTombstoneRow = typeof auditTombstones.$inferSelect;
