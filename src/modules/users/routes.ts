import { Envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import { callerOf, contextOf, type App } from '../../platform/http/types.js';
import {
  AdminUpdateBody,
  ChangePasswordBody,
  Message,
  PageQuery,
  UpdateProfileBody,
  User,
  UserIdParams,
  UserPage,
  toUserDto,
} from './schema.js';
import type { UsersService } from './service.js';

const tags = ['users'];
const notFound = { 404: errorResponse('No such user') };
const emailTaken = { 409: errorResponse('Email taken') };

export function usersRoutes(app: App, { users }: { users: UsersService }): void {
  const self = { config: { auth: 'user' as const } };
  const admin = { config: { auth: 'admin' as const } };

  app.get(
    '/api/users/me',
    {
      ...self,
      schema: {
        tags,
        operationId: 'getOwnProfile',
        summary: 'Own profile',
        response: { 200: Envelope(User) },
      },
    },
    async (request) => ok(request, toUserDto(await users.get(callerOf(request).id))),
  );

  app.put(
    '/api/users/me',
    {
      ...self,
      schema: {
        tags,
        operationId: 'updateOwnProfile',
        summary: 'Update own name and/or email',
        body: UpdateProfileBody,
        response: { 200: Envelope(User), ...emailTaken },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const row = await users.updateProfile(caller, request.body, contextOf(request));
      return ok(request, toUserDto(row));
    },
  );

  app.post(
    '/api/users/me/change-password',
    {
      ...self,
      schema: {
        tags,
        operationId: 'changeOwnPassword',
        summary: 'Change own password; ends every session of the account',
        description:
          'A wrong old password or a rejected new one is a 422 naming the field. Five wrong old ' +
          'passwords within 15 minutes lock changing the password for 15 minutes: 429 with Retry-After.',
        body: ChangePasswordBody,
        response: {
          200: Envelope(Message),
          429: errorResponse('Too many wrong old passwords: changing the password is locked'),
        },
      },
    },
    async (request) => {
      const { old_password, new_password } = request.body;
      await users.changePassword(callerOf(request), old_password, new_password, contextOf(request));
      return ok(request, { message: 'Password changed; sign in again' });
    },
  );

  app.delete(
    '/api/users/me',
    {
      ...self,
      schema: {
        tags,
        operationId: 'deleteOwnAccount',
        summary: 'Delete own account and everything it owns',
        response: {
          200: Envelope(Message),
          409: errorResponse('Administrators cannot delete themselves'),
        },
      },
    },
    async (request) => {
      await users.deleteSelf(callerOf(request), contextOf(request));
      return ok(request, { message: 'Account deleted' });
    },
  );

  app.get(
    '/api/users',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'listUsers',
        summary: 'Page of users, newest first',
        querystring: PageQuery,
        response: { 200: Envelope(UserPage) },
      },
    },
    async (request) => {
      const { offset, limit } = request.query;
      const { rows, total } = await users.page(offset, limit);
      return ok(request, { items: rows.map(toUserDto), total, offset, limit });
    },
  );

  app.get(
    '/api/users/:user_id',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'getUser',
        summary: 'One user',
        params: UserIdParams,
        response: { 200: Envelope(User), ...notFound },
      },
    },
    async (request) => ok(request, toUserDto(await users.get(request.params.user_id))),
  );

  app.patch(
    '/api/users/:user_id',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'updateUser',
        summary: 'Update any of full_name, email, is_active, admin_role',
        description:
          'Each change is audited as its own action. Administrators cannot deactivate or demote themselves (409).',
        params: UserIdParams,
        body: AdminUpdateBody,
        response: { 200: Envelope(User), ...notFound, ...emailTaken },
      },
    },
    async (request) => {
      const row = await users.adminUpdate(
        callerOf(request),
        request.params.user_id,
        request.body,
        contextOf(request),
      );
      return ok(request, toUserDto(row));
    },
  );

  const transitions = [
    ['activate', 'activateUser', 'Activate a user', { is_active: true }],
    [
      'deactivate',
      'deactivateUser',
      'Deactivate a user and end their sessions',
      { is_active: false },
    ],
    ['promote-admin', 'promoteUserToAdmin', 'Grant administrator rights', { admin_role: 'admin' }],
    ['revoke-admin', 'revokeUserAdmin', 'Revoke administrator rights', { admin_role: 'user' }],
  ] as const;
  for (const [action, operationId, summary, patch] of transitions) {
    app.put(
      `/api/users/:user_id/${action}`,
      {
        ...admin,
        schema: {
          tags,
          operationId,
          summary,
          description:
            'Idempotent. An administrator acting on themselves where that would remove their rights gets 409.',
          params: UserIdParams,
          response: {
            200: Envelope(User),
            ...notFound,
            409: errorResponse('Would remove the caller’s own rights'),
          },
        },
      },
      async (request) => {
        const row = await users.adminUpdate(
          callerOf(request),
          request.params.user_id,
          patch,
          contextOf(request),
        );
        return ok(request, toUserDto(row));
      },
    );
  }
}
