import { sql } from 'drizzle-orm';
import { boolean, check, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

// Milliseconds, as a JavaScript Date holds them: a row read back from the cache equals the stored one.
const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

/**
 * Feature flags (spec 2.8 and 4.7, DECISIONS 7). The name is the identifier in paths; the
 * database checks the name pattern and the percentage range as well as the routes do.
 */
export const featureFlags = pgTable(
  'feature_flags',
  {
    name: text('name').primaryKey(),
    enabled: boolean('enabled').notNull().default(false),
    description: text('description').notNull().default(''),
    rolloutPercentage: integer('rollout_percentage').notNull().default(100),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    check('feature_flags_name_check', sql`${t.name} ~ '^[a-z][a-z0-9_.-]{1,63}$'`),
    check('feature_flags_rollout_percentage_check', sql`${t.rolloutPercentage} between 0 and 100`),
  ],
);

export type FeatureFlagRow = typeof featureFlags.$inferSelect;
