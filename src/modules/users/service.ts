import type { Db } from '../../db/client.js';
import type { UserRow } from '../../db/schema/index.js';
import { isUniqueViolation } from '../../db/errors.js';
import { AppError, conflict, notFound, validationError } from '../../errors.js';
import type { CacheRegion } from '../../platform/layered-cache.js';
import { userEvent, type AuditService, type RequestContext } from '../audit/service.js';
import { auditRepo } from '../audit/repo.js';
import { emailDigest } from '../audit/hash.js';
import { hashPassword, passwordProblems, verifyPassword } from '../auth/password.js';
import type { PasswordChangeLockout } from '../auth/password-lockout.js';
import type { Sessions } from '../auth/sessions.js';
import { usersRepo, type UserPatch } from './repo.js';

/** Who acts: a signed-in user, or the system itself (id and email null) at start-up or from the CLI. */
export interface Actor {
  id: string | null;
  email: string | null;
}

/** A signed-in user acting on their own account. */
export interface SelfActor {
  id: string;
  email: string;
}

export interface AdminPatch {
  full_name?: string;
  email?: string;
  is_active?: boolean;
  admin_role?: 'user' | 'admin';
}

export interface AdminUpdateOptions {
  /** Why: recorded on (de)activation and role changes. */
  reason?: string | undefined;
  /** Refuse (422 `body.reason`) a deactivation or role change without a reason (the admin panel). */
  requireReason?: boolean;
}

export const normalizeEmail = (email: string): string => email.trim();

/** Profiles, passwords, account deletion and user administration (spec 4.2, DECISIONS 2). */
export class UsersService {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
    private readonly sessions: Sessions,
    private readonly guessing: PasswordChangeLockout,
    /** User rows by id: kept briefly in memory (USER_CACHE_TTL_MS) and in Redis. */
    private readonly cache: CacheRegion<UserRow>,
  ) {}

  /**
   * The user behind an authenticated request, through the cache. Every change to a user drops
   * the entry everywhere; the memory lifetime (under a second by default, DECISIONS 2) bounds what
   * an instance that missed the message can serve.
   */
  async findForAuth(id: string): Promise<UserRow | undefined> {
    return this.cache.get(id, () => usersRepo.findById(this.db, id));
  }

  /** Drops the user's cached row on every instance (after a committed change). */
  async forget(id: string): Promise<void> {
    await this.cache.delete(id);
  }

  async get(id: string): Promise<UserRow> {
    const row = await usersRepo.findById(this.db, id);
    if (row === undefined) throw notFound('User');
    return row;
  }

  async page(offset: number, limit: number) {
    const [rows, total] = await Promise.all([
      usersRepo.page(this.db, offset, limit),
      usersRepo.count(this.db),
    ]);
    return { rows, total };
  }

  async updateProfile(
    actor: SelfActor,
    patch: { full_name?: string; email?: string },
    ctx: RequestContext,
  ) {
    return this.applyPatch(actor, actor.id, patch, ctx);
  }

  /** PATCH /api/users/{id}: any of name, email, activation and role, audited per change. */
  async adminUpdate(
    actor: Actor,
    id: string,
    patch: AdminPatch,
    ctx: RequestContext,
    options: AdminUpdateOptions = {},
  ) {
    return this.applyPatch(actor, id, patch, ctx, options);
  }

  async changePassword(
    actor: SelfActor,
    oldPassword: string,
    newPassword: string,
    ctx: RequestContext,
  ) {
    const user = await this.get(actor.id);
    // Reserved before argon2 runs: at most the lockout's number of wrong guesses is ever checked.
    const attempt = await this.guessing.reserve(actor, ctx);
    const problems = passwordProblems(newPassword, user.email, 'body.new_password');
    if (!(await verifyPassword(user.passwordHash, oldPassword))) {
      await this.guessing.recordWrongPassword(actor, attempt, ctx);
      problems.unshift({ field: 'body.old_password', message: 'is not the current password' });
    } else {
      await this.guessing.reset(user.id);
      if (oldPassword === newPassword) {
        problems.push({ field: 'body.new_password', message: 'must differ from the current one' });
      }
    }
    if (problems.length > 0) {
      const event = userEvent('user.password_changed', actor, user.id, { success: false });
      await this.audit.record(event, ctx);
      throw new AppError('VALIDATION_ERROR', 'Password not changed', problems);
    }
    const passwordHash = await hashPassword(newPassword);
    await this.db.transaction(async (tx) => {
      await usersRepo.update(tx, user.id, { passwordHash });
      await this.sessions.revokeAll(tx, user.id, new Date());
      await this.audit.append(tx, userEvent('user.password_changed', actor, user.id), ctx);
    });
    await this.forget(user.id);
  }

  /** Deletes the account and all it owns; audit entries keep the id, the email becomes a digest. */
  async deleteSelf(actor: SelfActor, ctx: RequestContext): Promise<void> {
    const user = await this.get(actor.id);
    if (user.adminRole === 'admin') {
      throw conflict(
        'An administrator cannot delete their own account; ask another administrator to revoke your rights first',
      );
    }
    await this.db.transaction(async (tx) => {
      await this.removeAccount(tx, user);
      const event = userEvent(
        'user.deleted',
        { id: user.id, email: emailDigest(user.email) },
        user.id,
      );
      await this.audit.append(tx, event, ctx);
    });
    await this.forget(user.id);
  }

  /**
   * An administrator deletes another account as account deletion does; never their own, never the
   * last active administrator. Audited with the administrator as actor.
   */
  async adminDelete(actor: SelfActor, id: string, ctx: RequestContext): Promise<void> {
    if (actor.id === id) {
      throw conflict('Administrators cannot delete their own account');
    }
    await this.db.transaction(async (tx) => {
      const user = await usersRepo.findById(tx, id);
      if (user === undefined) throw notFound('User');
      if (user.adminRole === 'admin' && user.isActive) await this.keepOneAdmin(tx, id);
      await this.removeAccount(tx, user);
      await this.audit.append(tx, userEvent('user.deleted', actor, id), ctx);
    });
    await this.forget(id);
  }

  /** Ends the user's sessions, reduces their email in the audit log to its digest, deletes them. */
  private async removeAccount(tx: Db, user: UserRow): Promise<void> {
    await this.sessions.revokeAll(tx, user.id, new Date());
    await auditRepo.redactEmail(tx, user.id, user.email);
    await usersRepo.delete(tx, user.id);
  }

  /**
   * The system never loses its last administrator, even when two administrators demote each other
   * at the same moment: the active administrators are locked, then counted without the target.
   */
  private async keepOneAdmin(tx: Db, targetId: string): Promise<void> {
    const admins = await usersRepo.lockActiveAdmins(tx);
    if (admins.every((adminId) => adminId === targetId)) {
      throw conflict('This would leave the service without an active administrator');
    }
  }

  private async applyPatch(
    actor: Actor,
    id: string,
    patch: AdminPatch,
    ctx: RequestContext,
    options: AdminUpdateOptions = {},
  ) {
    if (actor.id === id && patch.is_active === false) {
      throw conflict('Administrators cannot deactivate their own account');
    }
    if (actor.id === id && patch.admin_role === 'user') {
      const self = await this.get(id);
      if (self.adminRole === 'admin')
        throw conflict('Administrators cannot revoke their own rights');
    }
    try {
      const updated = await this.db.transaction(async (tx) => {
        const before = await usersRepo.findById(tx, id);
        if (before === undefined) throw notFound('User');
        const changes = diff(before, patch);
        const events = withReason(changes.events, options);
        if (events.length === 0) return before;
        if (removesAdmin(before, changes.patch)) await this.keepOneAdmin(tx, id);
        const after = await usersRepo.update(tx, id, changes.patch);
        if (after === undefined) throw notFound('User');
        if (changes.patch.isActive === false) await this.sessions.revokeAll(tx, id, new Date());
        for (const event of events) {
          await this.audit.append(
            tx,
            userEvent(event.action, actor, id, { details: event.details }),
            ctx,
          );
        }
        return after;
      });
      await this.forget(id);
      return updated;
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('Another account already uses this email');
      throw err;
    }
  }
}

/** True when the change takes an active administrator out of the set of active administrators. */
function removesAdmin(before: UserRow, patch: UserPatch): boolean {
  const wasAdmin = before.adminRole === 'admin' && before.isActive;
  return wasAdmin && (patch.adminRole === 'user' || patch.isActive === false);
}

interface Change {
  action: string;
  details?: Record<string, unknown>;
}

const REASON_REQUIRED = new Set(['user.deactivated', 'user.promoted', 'user.demoted']);
const REASON_RECORDED = new Set([...REASON_REQUIRED, 'user.activated']);

/** The changes with the reason in the details of those that record one; 422 if one is missing. */
function withReason(events: Change[], options: AdminUpdateOptions): Change[] {
  const reason = options.reason?.trim() ?? '';
  if (reason === '') {
    if (options.requireReason === true && events.some((e) => REASON_REQUIRED.has(e.action))) {
      throw validationError('body.reason', 'is required to deactivate a user or change their role');
    }
    return events;
  }
  return events.map((e) =>
    REASON_RECORDED.has(e.action) ? { ...e, details: { ...e.details, reason } } : e,
  );
}

/** What the patch really changes, and the audit action for each change. */
function diff(before: UserRow, patch: AdminPatch): { patch: UserPatch; events: Change[] } {
  const out: UserPatch = {};
  const events: Change[] = [];
  const fields: string[] = [];
  const fullName = patch.full_name?.trim();
  if (fullName !== undefined && fullName !== before.fullName) {
    out.fullName = fullName;
    fields.push('full_name');
  }
  const email = patch.email === undefined ? undefined : normalizeEmail(patch.email);
  if (email !== undefined && email !== before.email) {
    out.email = email;
    fields.push('email');
  }
  if (fields.length > 0) events.push({ action: 'user.updated', details: { fields } });
  if (patch.is_active !== undefined && patch.is_active !== before.isActive) {
    out.isActive = patch.is_active;
    events.push({ action: patch.is_active ? 'user.activated' : 'user.deactivated' });
  }
  if (patch.admin_role !== undefined && patch.admin_role !== before.adminRole) {
    out.adminRole = patch.admin_role;
    events.push({ action: patch.admin_role === 'admin' ? 'user.promoted' : 'user.demoted' });
  }
  return { patch: out, events };
}
