import type { Db } from '../../db/client.js';
import type { AuditRow, UserLockRow } from '../../db/schema/index.js';
import { AppError, notFound } from '../../errors.js';
import type { RequestContext } from '../audit/service.js';
import { usersRepo } from '../users/repo.js';
import { toUserDto, type UserDto } from '../users/schema.js';
import type { SelfActor, UsersService } from '../users/service.js';
import { panelUsersRepo } from './users-repo.js';
import {
  HISTORY_LIMIT,
  toPanelUserDto,
  type LockReasonDto,
  type PanelUpdate,
  type PanelUserDetailDto,
  type PanelUserDto,
  type RoleChangeDto,
} from './users-schema.js';

type Role = 'user' | 'admin';

const isRole = (value: unknown): value is Role => value === 'user' || value === 'admin';
const textOf = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/**
 * The admin panel's users (spec 4.4, DECISIONS 2 and 7): pages with statistics, details, changes
 * with a reason, deletion, and the role and lock histories read from the audit log and the lock
 * records. Changes go through UsersService, which owns the rules and the audit of every change.
 */
export class AdminUsersService {
  constructor(
    private readonly db: Db,
    private readonly users: UsersService,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async page(offset: number, limit: number) {
    const [rows, total] = await Promise.all([
      panelUsersRepo.pageWithStats(this.db, offset, limit),
      usersRepo.count(this.db),
    ]);
    const items: PanelUserDto[] = rows.map((r) => toPanelUserDto(r.user, r));
    return { items, total, offset, limit };
  }

  async detail(id: string): Promise<PanelUserDetailDto> {
    const row = await panelUsersRepo.oneWithStats(this.db, id);
    if (row === undefined) throw notFound('User');
    const until = row.user.lockedUntil;
    const locked = until !== null && until > this.now();
    return {
      ...toPanelUserDto(row.user, row),
      locked_until: locked ? until.toISOString() : null,
      active_lock: locked,
    };
  }

  /** Any of name, email, activation and role; a deactivation or role change needs a reason. */
  async update(
    actor: SelfActor,
    id: string,
    body: PanelUpdate,
    ctx: RequestContext,
  ): Promise<UserDto> {
    const { reason, ...patch } = body;
    if (Object.keys(patch).length === 0) {
      throw new AppError('VALIDATION_ERROR', 'Request validation failed', [
        {
          field: 'body',
          message: 'must set at least one of full_name, email, is_active, admin_role',
        },
      ]);
    }
    const options = { reason, requireReason: true };
    return toUserDto(await this.users.adminUpdate(actor, id, patch, ctx, options));
  }

  async remove(actor: SelfActor, id: string, ctx: RequestContext): Promise<void> {
    await this.users.adminDelete(actor, id, ctx);
  }

  /** Registration role, promotions and demotions, newest first. */
  async roleHistory(id: string) {
    await this.mustExist(id);
    const [rows, total] = await Promise.all([
      panelUsersRepo.roleEntries(this.db, id),
      panelUsersRepo.countRoleEntries(this.db, id),
    ]);
    const items: RoleChangeDto[] = rows.flatMap((row) => {
      const change = roleChangeOf(row);
      return change === null ? [] : [change];
    });
    return { items, total };
  }

  /** Login lockouts, deactivations and reactivations, newest first. */
  async lockReasons(id: string) {
    await this.mustExist(id);
    const [locks, entries, total] = await Promise.all([
      panelUsersRepo.lockouts(this.db, id),
      panelUsersRepo.activationEntries(this.db, id),
      panelUsersRepo.countLockReasons(this.db, id),
    ]);
    const now = this.now();
    const items: LockReasonDto[] = [
      ...locks.map((l) => lockoutOf(l, now)),
      ...entries.map(activationOf),
    ];
    // ISO 8601 UTC strings of one length order as the instants they name. Each kind brought its
    // newest HISTORY_LIMIT, so the newest HISTORY_LIMIT of both are among them.
    items.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
    return { items: items.slice(0, HISTORY_LIMIT), total };
  }

  private async mustExist(id: string): Promise<void> {
    if (!(await panelUsersRepo.exists(this.db, id))) throw notFound('User');
  }
}

function roleChangeOf(row: AuditRow): RoleChangeDto | null {
  const common = {
    timestamp: row.timestamp.toISOString(),
    actor_id: row.actorId,
    actor_email: row.actorEmail,
    reason: textOf(row.details.reason),
    request_id: row.requestId,
  };
  switch (row.action) {
    case 'user.promoted':
      return { ...common, action: row.action, from_role: 'user', to_role: 'admin' };
    case 'user.demoted':
      return { ...common, action: row.action, from_role: 'admin', to_role: 'user' };
    case 'auth.register': {
      const role = row.details.role;
      return isRole(role)
        ? { ...common, action: row.action, from_role: null, to_role: role }
        : null;
    }
    default:
      return null;
  }
}

function lockoutOf(lock: UserLockRow, now: Date): LockReasonDto {
  return {
    kind: 'lockout',
    at: lock.lockedAt.toISOString(),
    reason: lock.reason,
    failed_attempts: lock.failedAttempts,
    ip: lock.ip,
    locked_at: lock.lockedAt.toISOString(),
    locked_until: lock.lockedUntil.toISOString(),
    active: lock.lockedUntil > now,
  };
}

function activationOf(row: AuditRow): LockReasonDto {
  return {
    kind: row.action === 'user.deactivated' ? 'deactivation' : 'reactivation',
    at: row.timestamp.toISOString(),
    reason: textOf(row.details.reason),
    set_by: { id: row.actorId, email: row.actorEmail },
    request_id: row.requestId,
  };
}
