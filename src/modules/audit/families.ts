/**
 * Retention families of audit entries (spec: "EHR access and write logs 6 years, user session
 * data 1 year, error logs 90 days"). An entry belongs to the first family whose rule holds:
 *
 * - `ehr`: `ehr.*` (reads, writes and failed writes, whatever the outcome) and `degradation.*`
 *   (the EHR's fallback switching on and off: which patient context was served from the cache,
 *   and when, is part of the record of EHR access).
 * - `session`: signing in and out and what guards it: every `auth.*` except `auth.register`
 *   (an account change), and `user.password_change_locked` (a lockout, like
 *   `auth.account_locked`). Failed sign-ins stay here: they are session data, kept a year.
 * - `error`: any other failed entry, or an action ending in `failed` or `error`.
 * - `other`: administrative actions and account changes (`user.*`, `auth.register`, `flag.*`,
 *   `kb.*`, `cache.*`, `audit.*`, `conversation.deleted`, `feedback.exported`), kept.
 *
 * Migration 0010's SQL function `audit_family(action, success)` applies the same rules (the purge
 * selects through an index on it); test/audit-retention.int.test.ts checks that both agree.
 */
export type AuditFamily = 'ehr' | 'session' | 'error' | 'other';

/** The families that expire, in the order of their rules. `other` is kept. */
export const EXPIRING_FAMILIES = ['ehr', 'session', 'error'] as const;
export type ExpiringFamily = (typeof EXPIRING_FAMILIES)[number];

/** Entries purged per family. */
export type FamilyCounts = Record<ExpiringFamily, number>;

export const noCounts = (): FamilyCounts => ({ ehr: 0, session: 0, error: 0 });

export function familyOf(action: string, success: boolean): AuditFamily {
  if (action.startsWith('ehr.') || action.startsWith('degradation.')) return 'ehr';
  if (
    (action.startsWith('auth.') && action !== 'auth.register') ||
    action === 'user.password_change_locked'
  ) {
    return 'session';
  }
  if (!success || action.endsWith('failed') || action.endsWith('error')) return 'error';
  return 'other';
}

/** Retention per expiring family, in days. */
export type RetentionDays = Record<ExpiringFamily, number>;

const DAY_MS = 86_400_000;

/** Each family's cutoff at `now`: its entries stamped before it have expired. */
export function cutoffsAt(now: Date, days: RetentionDays): Record<ExpiringFamily, Date> {
  const at = (n: number) => new Date(now.getTime() - n * DAY_MS);
  return { ehr: at(days.ehr), session: at(days.session), error: at(days.error) };
}
