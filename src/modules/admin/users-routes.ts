import type { Db } from '../../db/client.js';
import { Envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import { callerOf, contextOf, type App } from '../../platform/http/types.js';
import type { HealthService } from '../health/service.js';
import { Message, PageQuery, User, UserIdParams } from '../users/schema.js';
import type { UsersService } from '../users/service.js';
import { PanelSummaryService } from './summary.js';
import { AdminUsersService } from './users-service.js';
import {
  History,
  LockReason,
  PanelSummary,
  PanelUpdateBody,
  PanelUserDetail,
  PanelUserPage,
  RoleChange,
} from './users-schema.js';

const tags = ['admin-panel'];
const admin = { config: { auth: 'admin' as const } };
const BASE = '/api/admin/panel';
const notFound = { 404: errorResponse('No such user') };

export interface AdminPanelUserDeps {
  db: Db;
  users: UsersService;
  health: HealthService;
}

/** The admin panel's summary and user administration (spec 4.4, DECISIONS 2 and 7). */
export function adminPanelUserRoutes(app: App, deps: AdminPanelUserDeps): void {
  const panel = new AdminUsersService(deps.db, deps.users);
  const summary = new PanelSummaryService(deps.db, deps.health);

  app.get(
    `${BASE}/summary`,
    {
      ...admin,
      schema: {
        tags,
        operationId: 'getPanelSummary',
        summary: 'Dashboard summary: users, conversations, system status and uptime',
        response: { 200: Envelope(PanelSummary) },
      },
    },
    async (request) => ok(request, await summary.summary()),
  );

  app.get(
    `${BASE}/users`,
    {
      ...admin,
      schema: {
        tags,
        operationId: 'listPanelUsers',
        summary: 'Page of users, newest first, each with conversation and message counts',
        querystring: PageQuery,
        response: { 200: Envelope(PanelUserPage) },
      },
    },
    async (request) => ok(request, await panel.page(request.query.offset, request.query.limit)),
  );

  app.get(
    `${BASE}/users/:user_id`,
    {
      ...admin,
      schema: {
        tags,
        operationId: 'getPanelUser',
        summary: 'One user with statistics and any login lockout in force',
        params: UserIdParams,
        response: { 200: Envelope(PanelUserDetail), ...notFound },
      },
    },
    async (request) => ok(request, await panel.detail(request.params.user_id)),
  );

  app.put(
    `${BASE}/users/:user_id`,
    {
      ...admin,
      schema: {
        tags,
        operationId: 'updatePanelUser',
        summary: 'Update any of full_name, email, is_active, admin_role, with a reason',
        description:
          '`reason` is required when the request deactivates the user or changes their role, and ' +
          'is recorded in that audit entry. Deactivation ends the user’s sessions. Administrators ' +
          'cannot deactivate or demote themselves, nor leave the service without an active ' +
          'administrator (409).',
        params: UserIdParams,
        body: PanelUpdateBody,
        response: {
          200: Envelope(User),
          ...notFound,
          409: errorResponse('Email taken, or the change would remove the caller’s own rights'),
        },
      },
    },
    async (request) => {
      const { user_id } = request.params;
      const user = await panel.update(callerOf(request), user_id, request.body, contextOf(request));
      return ok(request, user);
    },
  );

  app.delete(
    `${BASE}/users/:user_id`,
    {
      ...admin,
      schema: {
        tags,
        operationId: 'deletePanelUser',
        summary: 'Delete a user and everything they own; their tokens stop working at once',
        params: UserIdParams,
        response: {
          200: Envelope(Message),
          ...notFound,
          409: errorResponse('The caller’s own account, or the last active administrator'),
        },
      },
    },
    async (request) => {
      await panel.remove(callerOf(request), request.params.user_id, contextOf(request));
      return ok(request, { message: 'User deleted' });
    },
  );

  app.get(
    `${BASE}/users/:user_id/role-history`,
    {
      ...admin,
      schema: {
        tags,
        operationId: 'getPanelUserRoleHistory',
        summary: 'Role at registration and every promotion and demotion, newest first',
        params: UserIdParams,
        response: { 200: Envelope(History(RoleChange)), ...notFound },
      },
    },
    async (request) => ok(request, await panel.roleHistory(request.params.user_id)),
  );

  app.get(
    `${BASE}/users/:user_id/lock-reasons`,
    {
      ...admin,
      schema: {
        tags,
        operationId: 'getPanelUserLockReasons',
        summary: 'Login lockouts, deactivations and reactivations with reasons, newest first',
        params: UserIdParams,
        response: { 200: Envelope(History(LockReason)), ...notFound },
      },
    },
    async (request) => ok(request, await panel.lockReasons(request.params.user_id)),
  );
}
