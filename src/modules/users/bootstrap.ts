import type { Db } from '../../db/client.js';
import type { UserRow } from '../../db/schema/index.js';
import { AppError, validationError } from '../../errors.js';
import { isEmail } from '../../platform/http/validation.js';
import { auditRepo } from '../audit/repo.js';
import { SYSTEM_CONTEXT, userEvent, type AuditService } from '../audit/service.js';
import { verifyPassword } from '../auth/password.js';
import type { AuthService } from '../auth/service.js';
import { usersRepo } from './repo.js';
import { normalizeEmail, type Actor, type UsersService } from './service.js';

export type AdminSource = 'bootstrap' | 'cli';
export type AdminOutcome = 'created' | 'promoted' | 'unchanged' | 'refused';
/** Why an existing account was not promoted. */
export type AdminRefusal = 'password_mismatch' | 'inactive' | 'demoted';

export interface AdminResult {
  outcome: AdminOutcome;
  userId: string;
  reason?: AdminRefusal;
}

export interface AdminDeps {
  db: Db;
  auth: AuthService;
  users: UsersService;
  audit: AuditService;
}

const SYSTEM: Actor = { id: null, email: null };

/**
 * Makes sure an administrator with this email exists (start-up and CLI). No account: creates it.
 * An administrator already: nothing to do. An ordinary account is promoted only when `password` is
 * its password (whoever registered the address first does not become administrator), it is active,
 * and, at start-up, no administrator demoted it; otherwise the refusal is audited and returned.
 */
export async function ensureAdmin(
  deps: AdminDeps,
  email: string,
  password: string,
  source: AdminSource,
): Promise<AdminResult> {
  // The HTTP schema checks addresses on register; this path bypasses it.
  if (!isEmail(email)) throw validationError('email', 'must be a valid email address');
  const existing = await usersRepo.findByEmail(deps.db, normalizeEmail(email));
  if (existing !== undefined) return promote(deps, existing, password, source);
  const local = normalizeEmail(email).split('@')[0] ?? '';
  try {
    const user = await deps.auth.register(
      { email, password, full_name: local === '' ? 'Administrator' : local, role: 'admin' },
      SYSTEM_CONTEXT,
      source,
    );
    return { outcome: 'created', userId: user.id };
  } catch (err) {
    // Another instance starting at the same moment created it first: judge that account.
    const raced = isConflict(err)
      ? await usersRepo.findByEmail(deps.db, normalizeEmail(email))
      : undefined;
    if (raced === undefined) throw err;
    return promote(deps, raced, password, source);
  }
}

async function promote(
  deps: AdminDeps,
  user: UserRow,
  password: string,
  source: AdminSource,
): Promise<AdminResult> {
  if (user.adminRole === 'admin') return { outcome: 'unchanged', userId: user.id };
  const reason = await refusal(deps.db, user, password, source);
  if (reason !== undefined) {
    const details = { source, reason };
    const event = userEvent('user.promoted', SYSTEM, user.id, { success: false, details });
    await deps.audit.record(event, SYSTEM_CONTEXT);
    return { outcome: 'refused', userId: user.id, reason };
  }
  await deps.users.adminUpdate(SYSTEM, user.id, { admin_role: 'admin' }, SYSTEM_CONTEXT);
  return { outcome: 'promoted', userId: user.id };
}

/**
 * A demoted administrator is recognised from the audit log: its latest role change is
 * `user.demoted`. Only start-up respects it; the CLI is an operator's explicit, audited action.
 */
async function refusal(
  db: Db,
  user: UserRow,
  password: string,
  source: AdminSource,
): Promise<AdminRefusal | undefined> {
  if (!(await verifyPassword(user.passwordHash, password))) return 'password_mismatch';
  if (!user.isActive) return 'inactive';
  if (source === 'bootstrap' && (await auditRepo.lastRoleChange(db, user.id)) === 'user.demoted') {
    return 'demoted';
  }
  return undefined;
}

const isConflict = (err: unknown) => err instanceof AppError && err.code === 'CONFLICT';

/** What an operator reads when an existing account was not promoted (no email, no password). */
export function describeRefusal(reason: AdminRefusal): string {
  switch (reason) {
    case 'password_mismatch':
      return 'an account with this email exists and the password given is not its password';
    case 'inactive':
      return 'an account with this email exists and is deactivated';
    case 'demoted':
      return 'an administrator demoted this account; promote it through the API or the CLI';
  }
}

export function describeAdminError(err: unknown): string {
  if (err instanceof AppError) {
    const details = Array.isArray(err.details)
      ? err.details.map((d) => `${d.field} ${d.message}`).join('; ')
      : '';
    return details ? `${err.message}: ${details}` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
