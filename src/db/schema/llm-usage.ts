import { bigint, pgTable, primaryKey, smallint, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The admin panel's token totals (issue 22 item 6), kept by a trigger on `messages`: each answer
 * inserted with `usage` is added, in the same transaction, to its hour's row and to the all-time
 * row of its provider and model, so the panel reads a few hundred rows however many answers there
 * are. Each total is split over 16 `shard`s (a hash of the conversation) so that answers stored at
 * once in different conversations do not all wait for one row's lock; readers add the shards up.
 * Rows never go down: an answer deleted later (its conversation or account deleted) still counts,
 * its tokens were spent.
 */

const counts = {
  answers: bigint('answers', { mode: 'number' }).notNull(),
  inputTokens: bigint('input_tokens', { mode: 'number' }).notNull(),
  outputTokens: bigint('output_tokens', { mode: 'number' }).notNull(),
};

/** Per hour (UTC): the recent window is read from here. */
export const llmUsageHourly = pgTable(
  'llm_usage_hourly',
  {
    hour: timestamp('hour', { withTimezone: true, mode: 'date' }).notNull(),
    provider: text('provider').notNull(),
    model: text('model').notNull(),
    shard: smallint('shard').notNull(),
    ...counts,
  },
  (t) => [primaryKey({ columns: [t.hour, t.provider, t.model, t.shard] })],
);

/** Since the first answer with usage. */
export const llmUsageTotals = pgTable(
  'llm_usage_totals',
  {
    provider: text('provider').notNull(),
    model: text('model').notNull(),
    shard: smallint('shard').notNull(),
    ...counts,
  },
  (t) => [primaryKey({ columns: [t.provider, t.model, t.shard] })],
);
