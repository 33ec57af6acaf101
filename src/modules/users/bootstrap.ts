import { AppError, validationError } from '../../errors.js';
import { isEmail } from '../../platform/http/validation.js';
import type { AuthService } from '../auth/service.js';
import { SYSTEM_CONTEXT } from '../audit/service.js';
import { usersRepo } from './repo.js';
import type { Actor, UsersService } from './service.js';
import type { Db } from '../../db/client.js';

export type AdminOutcome = 'created' | 'promoted' | 'unchanged';

/**
 * Makes sure an administrator with this email exists: creates it, or promotes the existing account
 * (its password is left as it is). Idempotent; used at start-up and by the CLI.
 */
export async function ensureAdmin(
  deps: { db: Db; auth: AuthService; users: UsersService },
  email: string,
  password: string,
  source: 'bootstrap' | 'cli',
): Promise<AdminOutcome> {
  // The HTTP schema checks addresses on register; this path bypasses it.
  if (!isEmail(email)) throw validationError('email', 'must be a valid email address');
  const existing = await usersRepo.findByEmail(deps.db, email.trim());
  if (existing === undefined) {
    const local = email.trim().split('@')[0] ?? '';
    const fullName = local === '' ? 'Administrator' : local;
    await deps.auth.register(
      { email, password, full_name: fullName, role: 'admin' },
      SYSTEM_CONTEXT,
      source,
    );
    return 'created';
  }
  if (existing.adminRole === 'admin') return 'unchanged';
  const system: Actor = { id: null, email: null };
  await deps.users.adminUpdate(system, existing.id, { admin_role: 'admin' }, SYSTEM_CONTEXT);
  return 'promoted';
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
