import { and, count, eq, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshTokens } from '../src/db/schema/index.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, login, type TestUser } from './helpers/factories.js';

/** Rounds per kind of revocation; before the fix a few rounds in ten left a live token. */
const ROUNDS = 25;
/** Refresh chains per round, each from a login of its own (the pool has ten connections). */
const CHAINS = 8;

interface Revocation {
  revoke(user: TestUser): Promise<void>;
  /** After the chains have stopped: undo what makes refresh fail regardless of tokens. */
  after?(user: TestUser): Promise<void>;
}

/**
 * Issue 9: a refresh that commits while a password change or deactivation revokes every token of
 * the user must not leave a live refresh token behind it. Many refresh chains (each presenting the
 * token it has just received) run while the revocation happens; afterwards no token issued before
 * or during the revocation may refresh, and no unused, unrevoked token of the user is left. Nor
 * may a login that checked the old password just before a password change begin a session after it.
 */
describe('refresh racing a revocation (PostgreSQL + Redis)', { timeout: 180_000 }, () => {
  let t: TestApp;
  let admin: TestUser;
  beforeAll(async () => {
    t = await createTestApp();
    admin = await createUser(t.app, t.deps, { admin: true });
  });
  afterAll(() => t.close());

  const refresh = (token: string) =>
    t.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: token } });

  /** Refreshes until refused, or once more after the revocation completed; the last token. */
  async function chain(start: string, revoked: { done: boolean }): Promise<string> {
    let token = start;
    for (;;) {
      const afterRevocation = revoked.done;
      const res = await refresh(token);
      if (res.statusCode !== 200) {
        expect(res.statusCode, res.body).toBe(401);
        return token;
      }
      token = dataOf<{ refresh_token: string }>(res).refresh_token;
      if (afterRevocation) return token;
    }
  }

  const liveTokens = async (userId: string) => {
    const [row] = await t.deps.database.db
      .select({ n: count() })
      .from(refreshTokens)
      .where(
        and(
          eq(refreshTokens.userId, userId),
          isNull(refreshTokens.usedAt),
          isNull(refreshTokens.revokedAt),
        ),
      );
    return row?.n ?? 0;
  };

  /** One round; the number of chains whose token still refreshes after the revocation. */
  async function round(revocation: Revocation): Promise<{ survivors: number; live: number }> {
    const user = await createUser(t.app, t.deps);
    const starts = [user.refresh];
    for (let i = 1; i < CHAINS; i++) {
      starts.push(dataOf<{ refresh_token: string }>(await login(t.app, user.email)).refresh_token);
    }
    const revoked = { done: false };
    const chains = starts.map((s) => chain(s, revoked));
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
    await revocation.revoke(user);
    revoked.done = true;
    const last = await Promise.all(chains);
    await revocation.after?.(user);
    const live = await liveTokens(user.id);
    let survivors = 0;
    for (const token of last) if ((await refresh(token)).statusCode === 200) survivors += 1;
    return { survivors, live };
  }

  async function rounds(revocation: Revocation) {
    const results = [];
    for (let i = 0; i < ROUNDS; i++) results.push(await round(revocation));
    return {
      roundsWithSurvivors: results.filter((r) => r.survivors > 0 || r.live > 0).length,
      survivors: results.reduce((n, r) => n + r.survivors, 0),
      live: results.reduce((n, r) => n + r.live, 0),
    };
  }

  it('leaves no live refresh token behind a password change', async () => {
    const changePassword = async (user: TestUser) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/users/me/change-password',
        headers: bearer(user.access),
        payload: { old_password: user.password, new_password: 'a brand new passphrase' },
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    expect(await rounds({ revoke: changePassword })).toEqual({
      roundsWithSurvivors: 0,
      survivors: 0,
      live: 0,
    });
  });

  it('leaves no live refresh token behind a deactivation, even once reactivated', async () => {
    const put = async (user: TestUser, action: 'deactivate' | 'activate') => {
      const res = await t.app.inject({
        method: 'PUT',
        url: `/api/users/${user.id}/${action}`,
        headers: bearer(admin.access),
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    expect(
      await rounds({ revoke: (u) => put(u, 'deactivate'), after: (u) => put(u, 'activate') }),
    ).toEqual({ roundsWithSurvivors: 0, survivors: 0, live: 0 });
  });

  it('leaves no session behind a password change from logins with the old password racing it', async () => {
    let leftBehind = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const user = await createUser(t.app, t.deps);
      const logins = Array.from({ length: CHAINS }, () => login(t.app, user.email));
      await new Promise((r) => setTimeout(r, Math.random() * 20));
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/users/me/change-password',
        headers: bearer(user.access),
        payload: { old_password: user.password, new_password: 'a brand new passphrase' },
      });
      expect(res.statusCode, res.body).toBe(200);
      for (const r of await Promise.all(logins)) expect([200, 401]).toContain(r.statusCode);
      leftBehind += await liveTokens(user.id);
    }
    expect(leftBehind).toBe(0);
  });

  it('leaves no live refresh token of the family behind a logout', async () => {
    const results = [];
    for (let i = 0; i < ROUNDS; i++) {
      const user = await createUser(t.app, t.deps);
      const revoked = { done: false };
      const running = chain(user.refresh, revoked);
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
      const out = await t.app.inject({
        method: 'POST',
        url: '/api/auth/logout',
        headers: bearer(user.access),
      });
      expect(out.statusCode, out.body).toBe(200);
      revoked.done = true;
      const last = await running;
      results.push({ survived: (await refresh(last)).statusCode === 200 });
    }
    expect(results.filter((r) => r.survived)).toHaveLength(0);
  });
});
