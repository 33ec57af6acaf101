import { randomUUID } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import type { UserRow } from '../../db/schema/index.js';
import { AppError } from '../../errors.js';
import type { Metrics } from '../../platform/metrics.js';
import { userEvent, type AuditService, type RequestContext } from '../audit/service.js';
import { usersRepo } from '../users/repo.js';

/**
 * Per-account lockout (DECISIONS 2): `maxFailures` wrong passwords within `windowSeconds` lock the
 * account for `lockSeconds`, with the reason recorded. The spec has no 423, so a locked account is
 * answered 429 RATE_LIMITED with Retry-After.
 */
export class LoginLockout {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
    private readonly metrics: Metrics,
    private readonly policy: Config['lockout'],
  ) {}

  /** The error to answer while the account is locked, or null when it is not. */
  lockedError(user: UserRow, now: Date): AppError | null {
    if (user.lockedUntil === null || user.lockedUntil <= now) return null;
    const retryAfter = Math.ceil((user.lockedUntil.getTime() - now.getTime()) / 1000);
    return new AppError(
      'RATE_LIMITED',
      'Too many failed logins; the account is locked for a while',
      { locked_until: user.lockedUntil.toISOString() },
      { 'retry-after': String(retryAfter) },
    );
  }

  /** Counts a wrong password; the failure that reaches the threshold locks the account. */
  async recordWrongPassword(user: UserRow, now: Date, ctx: RequestContext): Promise<void> {
    const { maxFailures, windowSeconds, lockSeconds } = this.policy;
    const locked = await this.db.transaction(async (tx) => {
      const failures = await usersRepo.recordFailure(tx, user.id, now, windowSeconds);
      const locks = failures >= maxFailures;
      const details = { reason: 'wrong_password', failures, locked: locks };
      const failed = userEvent('auth.login_failed', user, user.id, { success: false, details });
      await this.audit.append(tx, failed, ctx);
      if (!locks) return false;
      const lockedUntil = new Date(now.getTime() + lockSeconds * 1000);
      const reason = `${failures} failed logins within ${windowSeconds} s`;
      await usersRepo.setLockedUntil(tx, user.id, lockedUntil);
      await usersRepo.insertLock(tx, {
        id: randomUUID(),
        userId: user.id,
        reason,
        failedAttempts: failures,
        ip: ctx.ip,
        lockedAt: now,
        lockedUntil,
      });
      const lockDetails = { reason, locked_until: lockedUntil.toISOString() };
      const lockEvent = userEvent('auth.account_locked', user, user.id, { details: lockDetails });
      await this.audit.append(tx, lockEvent, ctx);
      return true;
    });
    this.metrics.authEvents.inc({ event: 'login_failed' });
    if (locked) this.metrics.authEvents.inc({ event: 'lockout' });
  }
}
