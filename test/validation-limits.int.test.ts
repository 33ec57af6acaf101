import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, errorOf, type TestUser } from './helpers/factories.js';

/**
 * Validation errors cannot be turned into an amplifier: a small request that names many wrong
 * fields gets at most 20 of them (DECISIONS 1), and a big one is validated up to its first error.
 */

const json = { 'content-type': 'application/json' };
const keys = (n: number, prefix = 'k') =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${String(i)}`, 1]));

describe('validation errors stay small', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite' });
    user = await createUser(t.app, t.deps);
  });
  afterAll(() => t.close());

  it('answers a 1 MiB body of 90,000 unknown keys with one error, not 90,000', async () => {
    const payload = JSON.stringify(keys(90_000));
    expect(payload.length).toBeLessThan(1024 * 1024);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/refresh',
      headers: json,
      payload,
    });
    const error = errorOf(res, 422);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details).toHaveLength(1);
    expect(res.body.length).toBeLessThan(1024);
  });

  it('lists every problem of a small body, at most 20', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      headers: json,
      payload: { ...keys(30, 'extra_'), email: 12, password: true },
    });
    const details = errorOf(res, 422).details as { field: string }[];
    expect(details).toHaveLength(20);
    expect(new Set(details.map((d) => d.field)).size).toBe(20);
  });

  it('still names each wrong field of an ordinary bad request', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      headers: json,
      payload: { email: 'not an email', password: 'short', full_name: '', role: 'admin' },
    });
    const fields = (errorOf(res, 422).details as { field: string }[]).map((d) => d.field);
    expect([...new Set(fields)].sort()).toEqual([
      'body.email',
      'body.full_name',
      'body.password',
      'body.role',
    ]);
  });

  it('names at most 20 unknown query parameters', async () => {
    const query = Array.from({ length: 500 }, (_, i) => `q${String(i)}=1`).join('&');
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/auth/me?${query}`,
      headers: bearer(user.access),
    });
    expect(errorOf(res, 422).details).toHaveLength(20);
  });

  it('answers a big array of wrong items with one error', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/conversations',
      headers: { ...json, ...bearer(user.access) },
      payload: JSON.stringify({ title: Array.from({ length: 100_000 }, () => 1) }),
    });
    expect(errorOf(res, 422).details).toEqual([{ field: 'body.title', message: 'must be string' }]);
  });
});
