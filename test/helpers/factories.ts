import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { App } from '../../src/platform/http/types.js';
import { usersRepo } from '../../src/modules/users/repo.js';
import type { Deps } from '../../src/deps.js';

export const PASSWORD = 'correct horse battery staple';

export interface TestUser {
  id: string;
  email: string;
  password: string;
  access: string;
  refresh: string;
}

export const uniqueEmail = (tag = 'user') =>
  `${tag}.${randomBytes(5).toString('hex')}@example.test`;
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export async function register(app: App, body: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: '/api/auth/register', payload: body });
}

export async function login(app: App, email: string, password = PASSWORD) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { email, password },
  });
  return res;
}

/** Registers, optionally promotes, and signs in a user; returns its tokens. */
export async function createUser(
  app: App,
  deps: Deps,
  opts: { admin?: boolean; email?: string; password?: string; fullName?: string } = {},
): Promise<TestUser> {
  const email = opts.email ?? uniqueEmail(opts.admin === true ? 'admin' : 'user');
  const password = opts.password ?? PASSWORD;
  const res = await register(app, { email, password, full_name: opts.fullName ?? 'Test User' });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json<{ data: { id: string } }>().data.id;
  if (opts.admin === true) await usersRepo.update(deps.database.db, id, { adminRole: 'admin' });
  const tokens = await login(app, email, password);
  expect(tokens.statusCode, tokens.body).toBe(200);
  const data = tokens.json<{ data: { access_token: string; refresh_token: string } }>().data;
  return { id, email, password, access: data.access_token, refresh: data.refresh_token };
}

/** The `data` of a success envelope, after checking the envelope. */
export function dataOf<T = Record<string, unknown>>(res: { statusCode: number; body: string }): T {
  const body = JSON.parse(res.body) as { success: boolean; data: T; error: unknown };
  expect(body.success, res.body).toBe(true);
  expect(body.error).toBeNull();
  return body.data;
}

/** The `error` of an error envelope, after checking status and envelope. */
export function errorOf(
  res: { statusCode: number; body: string; headers: Record<string, unknown> },
  status: number,
) {
  expect(res.statusCode, res.body).toBe(status);
  const body = JSON.parse(res.body) as {
    success: boolean;
    data: unknown;
    error: { code: string; message: string; details: unknown };
    meta: { request_id: string; timestamp: string };
  };
  expect(body.success).toBe(false);
  expect(body.data).toBeNull();
  expect(body.meta.request_id).toBe(res.headers['x-request-id']);
  return body.error;
}
