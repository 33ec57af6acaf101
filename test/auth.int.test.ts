import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usersRepo } from '../src/modules/users/repo.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import {
  PASSWORD,
  bearer,
  createUser,
  dataOf,
  errorOf,
  login,
  register,
  uniqueEmail,
} from './helpers/factories.js';

describe('auth (PostgreSQL + Redis)', () => {
  let t: TestApp;
  let clock = Date.now();
  beforeAll(async () => {
    t = await createTestApp({ now: () => new Date(clock) });
  });
  afterAll(() => t.close());

  const me = (token: string) =>
    t.app.inject({ method: 'GET', url: '/api/auth/me', headers: bearer(token) });
  const refresh = (token: string) =>
    t.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: token } });

  it('registers with a trimmed email and returns the user without the password', async () => {
    const email = uniqueEmail();
    const res = await register(t.app, {
      email: `  ${email}  `,
      password: PASSWORD,
      full_name: 'Ada Lovelace',
    });
    expect(res.statusCode).toBe(201);
    const user = dataOf(res);
    expect(user).toMatchObject({
      email,
      full_name: 'Ada Lovelace',
      is_active: true,
      is_admin: false,
      admin_role: 'user',
    });
    expect(JSON.stringify(user)).not.toMatch(/password|argon/i);
  });

  it('refuses a duplicate email whatever its case (409)', async () => {
    const email = uniqueEmail();
    await register(t.app, { email, password: PASSWORD, full_name: 'A' });
    const dup = await register(t.app, {
      email: email.toUpperCase(),
      password: PASSWORD,
      full_name: 'B',
    });
    expect(errorOf(dup, 409).code).toBe('CONFLICT');
  });

  it.each([
    ['short', 'abc1234', 'fewer than 8'],
    ['common', 'Sunshine', 'too common'],
    ['common (further down the list)', 'Password123', 'too common'],
    ['whitespace', '          ', 'whitespace'],
  ])('rejects a %s password with a field error', async (_kind, password, message) => {
    const err = errorOf(
      await register(t.app, { email: uniqueEmail(), password, full_name: 'X' }),
      422,
    );
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(err.details)).toContain('body.password');
    expect(JSON.stringify(err.details)).toContain(message);
  });

  it('rejects the email as password', async () => {
    const email = uniqueEmail();
    const err = errorOf(
      await register(t.app, { email, password: email.toUpperCase(), full_name: 'X' }),
      422,
    );
    expect(JSON.stringify(err.details)).toContain('same as the email');
  });

  it('logs in with a token pair of the documented shape and claims', async () => {
    const u = await createUser(t.app, t.deps);
    const res = await login(t.app, u.email.toUpperCase());
    const pair = dataOf(res);
    expect(pair).toMatchObject({ token_type: 'bearer', expires_in: 900 });
    const claims = JSON.parse(
      Buffer.from(String(pair.access_token).split('.')[1] ?? '', 'base64url').toString(),
    ) as Record<string, unknown>;
    expect(Object.keys(claims).sort()).toEqual(['exp', 'fam', 'iat', 'jti', 'sub', 'type']);
    expect(claims).toMatchObject({ sub: u.id, type: 'access' });
    const profile = dataOf(await me(String(pair.access_token)));
    expect(profile).toMatchObject({ id: u.id, admin_role: 'user' });
    expect(profile.last_login).toEqual(expect.any(String));
  });

  it('answers unknown email and wrong password alike (401)', async () => {
    const u = await createUser(t.app, t.deps);
    const a = errorOf(await login(t.app, uniqueEmail('nobody')), 401);
    const b = errorOf(await login(t.app, u.email, 'wrong password here'), 401);
    expect(a).toEqual(b);
  });

  it('refuses a refresh token as an access token and vice versa', async () => {
    const u = await createUser(t.app, t.deps);
    expect(errorOf(await me(u.refresh), 401).code).toBe('UNAUTHORIZED');
    expect(errorOf(await refresh(u.access), 401).code).toBe('UNAUTHORIZED');
  });

  it('rotates refresh tokens and revokes the family when a used one comes back', async () => {
    const u = await createUser(t.app, t.deps);
    const first = dataOf<{ access_token: string; refresh_token: string }>(await refresh(u.refresh));
    const second = dataOf<{ access_token: string; refresh_token: string }>(
      await refresh(first.refresh_token),
    );
    expect((await me(second.access_token)).statusCode).toBe(200);

    errorOf(await refresh(u.refresh), 401); // reuse of the first token
    errorOf(await refresh(second.refresh_token), 401); // the whole family is gone
    errorOf(await me(second.access_token), 401);
    errorOf(await me(u.access), 401);
    expect((await login(t.app, u.email)).statusCode).toBe(200); // a new login works at once
  });

  it('logout revokes the access token and its refresh family', async () => {
    const u = await createUser(t.app, t.deps);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: bearer(u.access),
    });
    expect(dataOf(res)).toEqual({ message: 'Logged out' });
    expect(errorOf(await me(u.access), 401).message).toMatch(/revoked/);
    errorOf(await refresh(u.refresh), 401);
  });

  it('rejects expired access tokens and refresh tokens past seven days', async () => {
    const u = await createUser(t.app, t.deps);
    const start = clock;
    try {
      clock = start + 901_000;
      expect(errorOf(await me(u.access), 401).message).toMatch(/expired/);
      clock = start + 7 * 86_400_000 + 1000;
      errorOf(await refresh(u.refresh), 401);
    } finally {
      clock = start;
    }
  });

  it('locks the account after five failures in 15 minutes, records why, and unlocks after 15', async () => {
    const u = await createUser(t.app, t.deps);
    const start = clock;
    try {
      for (let i = 0; i < 5; i++) errorOf(await login(t.app, u.email, 'not the password'), 401);
      const locked = await login(t.app, u.email); // even the right password
      const lockedError = errorOf(locked, 429);
      expect(lockedError.code).toBe('RATE_LIMITED');
      expect(lockedError.details).toEqual({ locked_until: expect.stringMatching(/Z$/) });
      expect(Number(locked.headers['retry-after'])).toBeGreaterThan(800);
      const reasons = await usersRepo.locks(t.deps.database.db, u.id);
      expect(reasons).toHaveLength(1);
      expect(reasons[0]).toMatchObject({
        failedAttempts: 5,
        reason: expect.stringMatching(/5 failed logins/),
      });
      clock = start + 15 * 60_000 + 1000;
      expect((await login(t.app, u.email)).statusCode).toBe(200);
    } finally {
      clock = start;
    }
  });

  it('does not lock for failures spread over more than the window', async () => {
    const u = await createUser(t.app, t.deps);
    const start = clock;
    try {
      for (let i = 0; i < 8; i++) {
        clock = start + i * 4 * 60_000; // one failure every four minutes
        errorOf(await login(t.app, u.email, 'not the password'), 401);
      }
      expect((await login(t.app, u.email)).statusCode).toBe(200);
    } finally {
      clock = start;
    }
  });

  it('counts parallel failures exactly', async () => {
    const u = await createUser(t.app, t.deps);
    await Promise.all(Array.from({ length: 5 }, () => login(t.app, u.email, 'not the password')));
    errorOf(await login(t.app, u.email), 429);
  });

  it('answers 403 for a deactivated account with the right password only', async () => {
    const u = await createUser(t.app, t.deps);
    await t.deps.users.adminUpdate(
      { id: null, email: null },
      u.id,
      { is_active: false },
      { ip: null, userAgent: null, requestId: null },
    );
    expect(errorOf(await login(t.app, u.email), 403).message).toMatch(/inactive/);
    errorOf(await login(t.app, u.email, 'wrong password here'), 401);
    errorOf(await me(u.access), 401);
  });

  it('refuses malformed, tampered and foreign-key tokens', async () => {
    const u = await createUser(t.app, t.deps);
    const [h, p] = u.access.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: u.id, type: 'access', jti: 'x', fam: 'y', iat: 1, exp: 9e9 })).toString('base64url')}.${u.access.split('.')[2]}`;
    for (const token of ['x', `${h}.${p}.AAAA`, forged, u.access + 'x']) {
      expect(errorOf(await me(token), 401).code).toBe('UNAUTHORIZED');
    }
    expect((await me('x')).headers['www-authenticate']).toBe('Bearer');
    const noScheme = await t.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: { authorization: u.access },
    });
    errorOf(noScheme, 401);
  });
});
