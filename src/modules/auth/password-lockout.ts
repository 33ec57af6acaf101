import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { AttemptStore } from '../../platform/attempts.js';
import type { Metrics } from '../../platform/metrics.js';
import { userEvent, type AuditService, type RequestContext } from '../audit/service.js';
import { usersRepo } from '../users/repo.js';
import { AttemptGuard, lockedError, type LockPolicy } from './attempt-guard.js';

const LOCKED = 'Too many wrong passwords; changing the password is locked for a while';

/**
 * Change-password lockout (DECISIONS 8): `old_password` is a password check like login's, so a
 * stolen access token must not allow unlimited guesses. Per account, with login's thresholds;
 * it locks changing the password only, not signing in.
 */
export class PasswordChangeLockout {
  private readonly guard: AttemptGuard;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
    private readonly metrics: Metrics,
    private readonly policy: LockPolicy,
    attempts: AttemptStore,
    private readonly now: () => Date,
  ) {
    this.guard = new AttemptGuard(attempts, 'change-password', policy, now);
  }

  /** Reserves one check of `old_password` before it runs; throws the 429 while locked. */
  async reserve(actor: { id: string; email: string }, ctx: RequestContext): Promise<number> {
    const reserved = await this.guard.reserve(actor.id);
    if ('attempt' in reserved) return reserved.attempt;
    const details = { reason: 'locked' };
    const event = userEvent('user.password_changed', actor, actor.id, { success: false, details });
    await this.audit.record(event, ctx);
    throw lockedError(LOCKED, reserved.lockedUntil, this.now());
  }

  /** The old password was right: the count starts again. */
  async reset(userId: string): Promise<void> {
    await this.guard.succeeded(userId);
  }

  /** A wrong old password on reservation `attempt`; the last one allowed locks, with its reason. */
  async recordWrongPassword(
    actor: { id: string; email: string },
    attempt: number,
    ctx: RequestContext,
  ): Promise<void> {
    const lockedUntil = await this.guard.failed(actor.id, attempt);
    if (lockedUntil === null) return;
    const reason = `${attempt} wrong passwords at change-password within ${this.policy.windowSeconds} s`;
    await this.db.transaction(async (tx) => {
      await usersRepo.insertLock(tx, {
        id: randomUUID(),
        userId: actor.id,
        reason,
        failedAttempts: attempt,
        ip: ctx.ip,
        lockedAt: this.now(),
        lockedUntil,
      });
      const details = { reason, locked_until: lockedUntil.toISOString() };
      const event = userEvent('user.password_change_locked', actor, actor.id, { details });
      await this.audit.append(tx, event, ctx);
    });
    this.metrics.authEvents.inc({ event: 'lockout' });
  }
}
