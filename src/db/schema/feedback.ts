import { sql } from 'drizzle-orm';
import { check, index, pgTable, smallint, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './users.js';

/**
 * Feedback of users on a voice or chat session (spec 2.9 and 4.9, DECISIONS 7). `session_id` is
 * the client's reference to the session, stored as given. Rows go with their author's account.
 */
export const feedback = pgTable(
  'feedback',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    sessionId: text('session_id').notNull(),
    rating: smallint('rating').notNull(),
    category: text('category').notNull(),
    comments: text('comments'),
    // Milliseconds, as a JavaScript Date holds them: the export's keyset cursor is then exact.
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 })
      .notNull()
      .defaultNow(),
  },
  (t) => [
    // The summary's window and the export's keyset pages (created_at, id) both read this index.
    index('feedback_created_at_idx').on(t.createdAt, t.id),
    // Deleting an account cascades here.
    index('feedback_user_idx').on(t.userId),
    check('feedback_rating_check', sql`${t.rating} between 1 and 5`),
  ],
);

export type FeedbackRow = typeof feedback.$inferSelect;
