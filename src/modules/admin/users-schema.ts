import { Type, type Static } from 'typebox';
import type { UserRow } from '../../db/schema/index.js';
import { VisibleText } from '../../platform/http/text.js';
import { AdminRole, Email, FullName, User, toUserDto } from '../users/schema.js';

const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()]);

export const MAX_REASON_CHARS = 500;

/** At most this many entries of a user's role history or lock reasons are answered. */
export const HISTORY_LIMIT = 500;

/** Dashboard summary (spec 2.9). */
export const PanelSummary = Type.Object({
  users: Type.Object({
    total: Type.Integer(),
    active: Type.Integer(),
    admins: Type.Integer({ description: 'Users with the admin role, active or not' }),
  }),
  conversations: Type.Object({
    total: Type.Integer(),
    today: Type.Integer({ description: 'Created since 00:00 UTC today' }),
  }),
  system: Type.Object({
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
      description: '`ok` when every readiness check passes, else `degraded`',
    }),
    uptime: Type.Integer({ description: 'Seconds since this instance started' }),
  }),
});
export type PanelSummaryDto = Static<typeof PanelSummary>;

export const UserStatistics = Type.Object({
  conversations: Type.Integer(),
  messages: Type.Integer({ description: 'Messages across all of the user’s conversations' }),
  last_login: Nullable(Timestamp),
});

export const PanelUser = Type.Object({ ...User.properties, statistics: UserStatistics });
export type PanelUserDto = Static<typeof PanelUser>;

export const PanelUserPage = Type.Object({
  items: Type.Array(PanelUser),
  total: Type.Integer(),
  offset: Type.Integer(),
  limit: Type.Integer(),
});

export const PanelUserDetail = Type.Object({
  ...PanelUser.properties,
  locked_until: Nullable(Timestamp),
  active_lock: Type.Boolean({ description: 'Logins are locked out now (failed logins)' }),
});
export type PanelUserDetailDto = Static<typeof PanelUserDetail>;

export const PanelUpdateBody = Type.Object(
  {
    full_name: Type.Optional(FullName),
    email: Type.Optional(Email),
    is_active: Type.Optional(Type.Boolean()),
    admin_role: Type.Optional(AdminRole),
    /** Why (trimmed): required to deactivate the user or change their role; audited. */
    reason: Type.Optional(VisibleText(MAX_REASON_CHARS)),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PanelUpdate = Static<typeof PanelUpdateBody>;

export const RoleChange = Type.Object({
  timestamp: Timestamp,
  action: Type.Union([
    Type.Literal('auth.register'),
    Type.Literal('user.promoted'),
    Type.Literal('user.demoted'),
  ]),
  from_role: Nullable(AdminRole),
  to_role: AdminRole,
  actor_id: Nullable(Type.String()),
  actor_email: Nullable(Type.String()),
  reason: Nullable(Type.String()),
  request_id: Nullable(Type.String()),
});
export type RoleChangeDto = Static<typeof RoleChange>;

const SetBy = Type.Object(
  { id: Nullable(Type.String()), email: Nullable(Type.String()) },
  { description: 'The administrator (both null: the system, e.g. the CLI)' },
);

const Lockout = Type.Object({
  kind: Type.Literal('lockout'),
  at: Timestamp,
  reason: Type.String(),
  failed_attempts: Type.Integer(),
  ip: Nullable(Type.String()),
  locked_at: Timestamp,
  locked_until: Timestamp,
  active: Type.Boolean({ description: 'Still in force' }),
});

const activation = (kind: 'deactivation' | 'reactivation') =>
  Type.Object({
    kind: Type.Literal(kind),
    at: Timestamp,
    reason: Nullable(Type.String()),
    set_by: SetBy,
    request_id: Nullable(Type.String()),
  });

export const LockReason = Type.Union([
  Lockout,
  activation('deactivation'),
  activation('reactivation'),
]);
export type LockReasonDto = Static<typeof LockReason>;

/**
 * A user's history (DECISIONS 1: `items` and `total`). Not paged: the spec names no paging fields
 * for it. `items` holds the newest entries, at most HISTORY_LIMIT; `total` counts them all, so a
 * longer history shows as `total` above the length of `items`.
 */
export const History = <T extends Parameters<typeof Type.Array>[0]>(item: T) =>
  Type.Object({
    items: Type.Array(item, { description: `Newest first, at most ${HISTORY_LIMIT}` }),
    total: Type.Integer({ description: 'Entries the user has, all of them' }),
  });

export interface Statistics {
  conversations: number;
  messages: number;
}

export function toPanelUserDto(row: UserRow, stats: Statistics): PanelUserDto {
  const user = toUserDto(row);
  return {
    ...user,
    statistics: {
      conversations: stats.conversations,
      messages: stats.messages,
      last_login: user.last_login,
    },
  };
}
