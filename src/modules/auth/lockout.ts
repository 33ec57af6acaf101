import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { UserRow } from '../../db/schema/index.js';
import type { AppError } from '../../errors.js';
import type { AttemptStore } from '../../platform/attempts.js';
import type { Metrics } from '../../platform/metrics.js';
import { userEvent, type AuditService, type RequestContext } from '../audit/service.js';
import { usersRepo } from '../users/repo.js';
import { AttemptGuard, lockedError, type LockPolicy } from './attempt-guard.js';

const LOCKED = 'Too many failed logins; the account is locked for a while';

/**
 * Login lockout (DECISIONS 2 and 8), per email whether or not an account has it, so a 429 tells
 * nothing about which emails are registered: `maxFailures` wrong passwords within `windowSeconds`
 * lock the email for `lockSeconds`, with the reason recorded. The spec has no 423: a locked email
 * is answered 429 RATE_LIMITED with Retry-After.
 */
export class LoginLockout {
  private readonly guard: AttemptGuard;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
    private readonly metrics: Metrics,
    private readonly policy: LockPolicy,
    attempts: AttemptStore,
    private readonly now: () => Date,
  ) {
    this.guard = new AttemptGuard(attempts, 'login', policy, now);
  }

  /**
   * Reserves one password check for `email` (already trimmed) before it runs: the attempt number,
   * or the 429 to answer. Emails are counted case-insensitively, as they are looked up.
   */
  async reserve(email: string): Promise<number | AppError> {
    const reserved = await this.guard.reserve(subjectOf(email));
    if ('attempt' in reserved) return reserved.attempt;
    return lockedError(LOCKED, reserved.lockedUntil, this.now());
  }

  /** A right password: the count starts again. */
  async reset(email: string): Promise<void> {
    await this.guard.succeeded(subjectOf(email));
  }

  /**
   * Records a wrong password (or an unknown email) on reservation `attempt`; the last attempt
   * allowed locks the email, recording why (and, for an account, a lock reason row).
   */
  async recordWrongPassword(
    email: string,
    user: UserRow | undefined,
    attempt: number,
    ctx: RequestContext,
  ): Promise<void> {
    const lockedUntil = await this.guard.failed(subjectOf(email), attempt);
    const actor = user ?? { id: null, email };
    const userId = user?.id ?? null;
    await this.db.transaction(async (tx) => {
      const reason = user === undefined ? 'unknown_email' : 'wrong_password';
      const details = { reason, failures: attempt, locked: lockedUntil !== null };
      const failed = userEvent('auth.login_failed', actor, userId, { success: false, details });
      await this.audit.append(tx, failed, ctx);
      if (lockedUntil === null) return;
      const why = `${attempt} failed logins within ${this.policy.windowSeconds} s`;
      if (user !== undefined) await this.recordLock(tx, user.id, why, attempt, lockedUntil, ctx);
      const lockDetails = { reason: why, locked_until: lockedUntil.toISOString() };
      const lockEvent = userEvent('auth.account_locked', actor, userId, { details: lockDetails });
      await this.audit.append(tx, lockEvent, ctx);
    });
    this.metrics.authEvents.inc({ event: 'login_failed' });
    if (lockedUntil !== null) this.metrics.authEvents.inc({ event: 'lockout' });
  }

  private async recordLock(
    tx: Db,
    userId: string,
    reason: string,
    failures: number,
    lockedUntil: Date,
    ctx: RequestContext,
  ): Promise<void> {
    await usersRepo.setLockedUntil(tx, userId, lockedUntil);
    await usersRepo.insertLock(tx, {
      id: randomUUID(),
      userId,
      reason,
      failedAttempts: failures,
      ip: ctx.ip,
      lockedAt: this.now(),
      lockedUntil,
    });
  }
}

/** Lookups compare `lower(email)`; the addresses accepted are ASCII, so this is the same key. */
const subjectOf = (email: string) => email.toLowerCase();
