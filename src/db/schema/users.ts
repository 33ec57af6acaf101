import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  index,
  integer,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey(),
    email: text('email').notNull(),
    fullName: text('full_name').notNull(),
    passwordHash: text('password_hash').notNull(),
    isActive: boolean('is_active').notNull().default(true),
    adminRole: text('admin_role', { enum: ['user', 'admin'] })
      .notNull()
      .default('user'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    lastLogin: ts('last_login'),
    failedLoginCount: integer('failed_login_count').notNull().default(0),
    failedLoginWindowStart: ts('failed_login_window_start'),
    lockedUntil: ts('locked_until'),
  },
  (t) => [
    uniqueIndex('users_email_lower_key').on(sql`lower(${t.email})`),
    index('users_created_at_idx').on(t.createdAt, t.id),
    check('users_admin_role_check', sql`${t.adminRole} in ('user', 'admin')`),
  ],
);

/** Why and when an account was locked; kept for the admin panel's lock-reasons view. */
export const userLocks = pgTable(
  'user_locks',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    reason: text('reason').notNull(),
    failedAttempts: integer('failed_attempts').notNull(),
    ip: text('ip'),
    lockedAt: ts('locked_at').notNull(),
    lockedUntil: ts('locked_until').notNull(),
  },
  (t) => [index('user_locks_user_idx').on(t.userId, t.lockedAt)],
);

export type UserRow = typeof users.$inferSelect;
export type UserLockRow = typeof userLocks.$inferSelect;
