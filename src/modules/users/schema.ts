import { Type, type Static } from 'typebox';
import type { UserRow } from '../../db/schema/index.js';
import { VisibleText } from '../../platform/http/text.js';

/** Validated with a custom `email` format that tolerates surrounding spaces; services trim. */
export const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });
export const Password = Type.String({ minLength: 8, maxLength: 128 });
export const FullName = VisibleText(200);
export const AdminRole = Type.Union([Type.Literal('user'), Type.Literal('admin')]);
export const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });

export const User = Type.Object({
  id: Uuid,
  email: Type.String(),
  full_name: Type.String(),
  is_active: Type.Boolean(),
  is_admin: Type.Boolean(),
  admin_role: AdminRole,
  created_at: Timestamp,
  updated_at: Timestamp,
  last_login: Type.Union([Timestamp, Type.Null()]),
});
export type UserDto = Static<typeof User>;

export const UserPage = Type.Object({
  items: Type.Array(User),
  total: Type.Integer(),
  offset: Type.Integer(),
  limit: Type.Integer(),
});

export const Message = Type.Object({ message: Type.String() });

export const UserIdParams = Type.Object({ user_id: Uuid }, { additionalProperties: false });

export const PageQuery = Type.Object(
  {
    offset: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  },
  { additionalProperties: false },
);

export const UpdateProfileBody = Type.Object(
  { full_name: Type.Optional(FullName), email: Type.Optional(Email) },
  { additionalProperties: false, minProperties: 1 },
);

export const AdminUpdateBody = Type.Object(
  {
    full_name: Type.Optional(FullName),
    email: Type.Optional(Email),
    is_active: Type.Optional(Type.Boolean()),
    admin_role: Type.Optional(AdminRole),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ChangePasswordBody = Type.Object(
  { old_password: Type.String({ minLength: 1, maxLength: 128 }), new_password: Password },
  { additionalProperties: false },
);

export function toUserDto(row: UserRow): UserDto {
  return {
    id: row.id,
    email: row.email,
    full_name: row.fullName,
    is_active: row.isActive,
    is_admin: row.adminRole === 'admin',
    admin_role: row.adminRole,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    last_login: row.lastLogin?.toISOString() ?? null,
  };
}
