import { createHash } from 'node:crypto';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import type { AttemptStore, AttemptWindow } from '../../platform/attempts.js';

export type LockPolicy = Config['lockout'];

/** How long a check waits for one of the window's checks under way to end. */
const FULL_WAIT_MS = 2000;

/** A password check reserved before it runs, or the lock refusing it. */
export type Reserved = { attempt: number } | { lockedUntil: Date };

/**
 * Password guessing limits (DECISIONS 2 and 8): at most `maxFailures` password checks per subject
 * within `windowSeconds` of the first, reserved atomically in the shared store *before* argon2
 * runs, so parallel requests cannot slip past the count; the check that uses the last reservation
 * and fails locks the subject for `lockSeconds`; a right password starts a new count. Subjects are
 * hashed: no email reaches the store. Fails closed: without the store no password is checked
 * (unlimited guessing otherwise); the request answers 503, a lost dependency (platform/outages.ts).
 */
export class AttemptGuard {
  constructor(
    private readonly store: AttemptStore,
    private readonly scope: string,
    private readonly policy: LockPolicy,
    private readonly now: () => Date,
  ) {}

  /**
   * Reserves one check. When every check the window allows is already under way, waits (briefly,
   * at most FULL_WAIT_MS) for one of them to end: a right password starts a new count and the
   * wait ends with a reservation; the last wrong one locks, and it ends with the lock.
   */
  async reserve(subject: string): Promise<Reserved> {
    const key = this.key(subject);
    const deadline = Date.now() + FULL_WAIT_MS;
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      const now = this.now().getTime();
      const reserved = await this.store.reserve(key, this.window(now));
      if (reserved.kind === 'granted') return { attempt: reserved.attempt };
      if (reserved.kind === 'locked') return { lockedUntil: new Date(reserved.until) };
      // Checks stuck for that long (an overloaded instance): refused for now, not locked.
      if (Date.now() + pause > deadline) return { lockedUntil: new Date(now + 1000) };
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /** A wrong password on reservation `attempt`; when that was the last one, the lock's end. */
  async failed(subject: string, attempt: number): Promise<Date | null> {
    if (attempt < this.policy.maxFailures) return null;
    const until = this.now().getTime() + this.policy.lockSeconds * 1000;
    await this.store.lock(this.key(subject), until, this.keepMs());
    return new Date(until);
  }

  /** A right password: the count starts again (a lock already in force stays). */
  async succeeded(subject: string): Promise<void> {
    await this.store.clear(this.key(subject), this.now().getTime());
  }

  private key(subject: string): string {
    return `attempts:${this.scope}:${createHash('sha256').update(subject).digest('base64url')}`;
  }

  private window(now: number): AttemptWindow {
    const { maxFailures, windowSeconds } = this.policy;
    return { now, windowMs: windowSeconds * 1000, max: maxFailures, keepMs: this.keepMs() };
  }

  private keepMs(): number {
    return Math.max(this.policy.windowSeconds, this.policy.lockSeconds) * 1000;
  }
}

/** The 429 of a lock: Retry-After and `details.locked_until` say when it ends. */
export function lockedError(message: string, until: Date, now: Date): AppError {
  const retryAfter = Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
  return new AppError(
    'RATE_LIMITED',
    message,
    { locked_until: until.toISOString() },
    { 'retry-after': String(retryAfter) },
  );
}
