import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/platform/http/types.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { PASSWORD, errorOf, uniqueEmail } from './helpers/factories.js';

/** The service's documented limits (spec section 8), instead of the helper's generous ones. */
const LIMITS = {
  RATE_LIMIT_REGISTER_PER_HOUR: '5',
  RATE_LIMIT_LOGIN_PER_MINUTE: '10',
  RATE_LIMIT_REFRESH_PER_MINUTE: '30',
  RATE_LIMIT_HEALTH_PER_MINUTE: '100',
  RATE_LIMIT_READY_PER_MINUTE: '100',
};

/**
 * A movable clock starting in the middle of a minute and of an hour, so the fixed windows never
 * roll over while a test is counting.
 */
function midWindowClock() {
  const hour = 3_600_000;
  const clock = { t: Math.floor(Date.now() / hour) * hour + 30 * 60_000 + 30_000 };
  return { clock, now: () => new Date(clock.t) };
}

/** A client address of its own for each test, so counts never leak between tests. */
const newIp = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

const loginFrom = (app: App, ip: string, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: '/api/auth/login',
    remoteAddress: ip,
    headers,
    payload: { email: uniqueEmail('nobody'), password: PASSWORD },
  });

function rateHeaders(res: { headers: Record<string, unknown> }) {
  const h = res.headers;
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    expect(h[name], `${name} missing`).toBeDefined();
  }
  return {
    limit: Number(h['x-ratelimit-limit']),
    remaining: Number(h['x-ratelimit-remaining']),
    reset: Number(h['x-ratelimit-reset']),
  };
}

describe('rate limits (PostgreSQL + Redis, documented defaults)', () => {
  let t: TestApp;
  const { clock, now } = midWindowClock();
  beforeAll(async () => {
    t = await createTestApp({ env: LIMITS, now });
  });
  afterAll(() => t.close());

  it('refuses the 11th login within a minute with a 429 RATE_LIMITED envelope', async () => {
    const ip = newIp();
    for (let i = 1; i <= 10; i++) {
      const res = await loginFrom(t.app, ip);
      expect(res.statusCode, `login ${i}`).toBe(401);
      expect(rateHeaders(res)).toMatchObject({ limit: 10, remaining: 10 - i });
    }
    const res = await loginFrom(t.app, ip);
    const err = errorOf(res, 429);
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.message).toMatch(/\S/);
    const retryAfter = Number(res.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(rateHeaders(res)).toMatchObject({ limit: 10, remaining: 0 });
  });

  it('refuses the 31st refresh within a minute (DECISIONS 8), whatever the tokens', async () => {
    const ip = newIp();
    const refreshFrom = (from: string, token: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/auth/refresh',
        remoteAddress: from,
        payload: { refresh_token: token },
      });
    for (let i = 1; i <= 30; i++) {
      const res = await refreshFrom(ip, `not.a.jwt.${i}`);
      expect(res.statusCode, `refresh ${i}`).toBe(401);
      expect(rateHeaders(res)).toMatchObject({ limit: 30, remaining: 30 - i });
    }
    const res = await refreshFrom(ip, 'not.a.jwt');
    expect(errorOf(res, 429).code).toBe('RATE_LIMITED');
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(rateHeaders(res)).toMatchObject({ limit: 30, remaining: 0 });
    // Another address, with a real token, still refreshes.
    const email = uniqueEmail();
    await t.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      remoteAddress: newIp(),
      payload: { email, password: PASSWORD, full_name: 'Refresher' },
    });
    const pair = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      remoteAddress: newIp(),
      payload: { email, password: PASSWORD },
    });
    const { refresh_token } = pair.json<{ data: { refresh_token: string } }>().data;
    const other = await refreshFrom(newIp(), refresh_token);
    expect(other.statusCode, other.body).toBe(200);
    expect(rateHeaders(other)).toMatchObject({ limit: 30, remaining: 29 });
  });

  it('sends X-RateLimit-Reset as a Unix timestamp in the future, at most one window away', async () => {
    const res = await loginFrom(t.app, newIp());
    const { reset } = rateHeaders(res);
    const nowSeconds = clock.t / 1000;
    expect(Number.isInteger(reset)).toBe(true);
    expect(reset).toBeGreaterThan(nowSeconds);
    expect(reset).toBeLessThanOrEqual(nowSeconds + 60);
    // Seconds, not milliseconds: within a day of the wall clock.
    expect(Math.abs(reset - Date.now() / 1000)).toBeLessThan(86_400);
  });

  it('puts the headers on every answer: success, validation error and refusal', async () => {
    const ip = newIp();
    const email = uniqueEmail();
    const registered = await t.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      remoteAddress: ip,
      payload: { email, password: PASSWORD, full_name: 'Rate Tester' },
    });
    expect(registered.statusCode, registered.body).toBe(201);
    expect(rateHeaders(registered)).toMatchObject({ limit: 5, remaining: 4 });

    const ok = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      remoteAddress: ip,
      payload: { email, password: PASSWORD },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(rateHeaders(ok)).toMatchObject({ limit: 10, remaining: 9 });

    const invalid = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      remoteAddress: ip,
      payload: { email: 'not an email' },
    });
    expect(invalid.statusCode).toBe(422);
    expect(rateHeaders(invalid)).toMatchObject({ limit: 10, remaining: 8 });

    const malformed = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      remoteAddress: ip,
      headers: { 'content-type': 'application/json' },
      payload: '{"email":',
    });
    expect(malformed.statusCode).toBe(422);
    expect(rateHeaders(malformed)).toMatchObject({ remaining: 7 });
  });

  it('allows requests again once the window has passed', async () => {
    const ip = newIp();
    for (let i = 0; i < 10; i++) await loginFrom(t.app, ip);
    const refused = await loginFrom(t.app, ip);
    expect(refused.statusCode).toBe(429);
    const { reset } = rateHeaders(refused);
    const saved = clock.t;
    try {
      clock.t = reset * 1000;
      const res = await loginFrom(t.app, ip);
      expect(res.statusCode).toBe(401);
      expect(rateHeaders(res)).toMatchObject({ remaining: 9 });
      expect(rateHeaders(res).reset).toBe(reset + 60);
    } finally {
      clock.t = saved;
    }
  });

  it('allows 5 registrations per hour from one address', async () => {
    const ip = newIp();
    const registerFrom = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/auth/register',
        remoteAddress: ip,
        payload: { email: uniqueEmail(), password: PASSWORD, full_name: 'Someone' },
      });
    for (let i = 1; i <= 5; i++) {
      const res = await registerFrom();
      expect(res.statusCode, res.body).toBe(201);
    }
    const res = await registerFrom();
    expect(errorOf(res, 429).code).toBe('RATE_LIMITED');
    const { reset, limit } = rateHeaders(res);
    expect(limit).toBe(5);
    expect(reset).toBeGreaterThan(clock.t / 1000);
    expect(reset).toBeLessThanOrEqual(clock.t / 1000 + 3600);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(60);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(3600);
    // Login from the same address has a count of its own.
    expect((await loginFrom(t.app, ip)).statusCode).toBe(401);
  });

  it.each(['/health', '/ready'])('allows 100 requests per minute to %s', async (url) => {
    const ip = newIp();
    for (let i = 1; i <= 100; i++) {
      const res = await t.app.inject({ method: 'GET', url, remoteAddress: ip });
      expect(res.statusCode, `${url} ${i}`).toBe(200);
      if (i === 1) expect(rateHeaders(res)).toMatchObject({ limit: 100, remaining: 99 });
    }
    const res = await t.app.inject({ method: 'GET', url, remoteAddress: ip });
    expect(errorOf(res, 429).code).toBe('RATE_LIMITED');
    expect(res.headers['retry-after']).toBeDefined();
    expect(rateHeaders(res)).toMatchObject({ limit: 100, remaining: 0 });
    // Another client still gets through.
    const other = await t.app.inject({ method: 'GET', url, remoteAddress: newIp() });
    expect(other.statusCode).toBe(200);
  });

  it('counts refusals in rate_limited_total', async () => {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toMatch(/^rate_limited_total\{limit="login"\} [1-9]/m);
  });
});

describe('rate limits shared by two instances on one database and one Redis', () => {
  let a: TestApp;
  let b: TestApp;
  const { now } = midWindowClock();
  beforeAll(async () => {
    a = await createTestApp({ env: LIMITS, now });
    b = await createTestApp({
      env: LIMITS,
      now,
      shared: {
        databaseUrl: a.deps.config.databaseUrl ?? '',
        redisPrefix: a.deps.config.redisPrefix,
      },
    });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('6 logins on A and 4 on B use up the limit; the 11th is refused on either', async () => {
    expect(b.deps.config.databaseUrl).toBe(a.deps.config.databaseUrl);
    const ip = newIp();
    for (let i = 0; i < 6; i++) expect((await loginFrom(a.app, ip)).statusCode).toBe(401);
    for (let i = 0; i < 4; i++) expect((await loginFrom(b.app, ip)).statusCode).toBe(401);
    const onB = await loginFrom(b.app, ip);
    expect(errorOf(onB, 429).code).toBe('RATE_LIMITED');
    expect(errorOf(await loginFrom(a.app, ip), 429).code).toBe('RATE_LIMITED');
  });

  it('both instances report the same remaining count and reset', async () => {
    const ip = newIp();
    const first = rateHeaders(await loginFrom(a.app, ip));
    const second = rateHeaders(await loginFrom(b.app, ip));
    expect(first.remaining).toBe(9);
    expect(second.remaining).toBe(8);
    expect(second.reset).toBe(first.reset);
  });
});

describe('client address behind a proxy', () => {
  describe('TRUST_PROXY=true', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({
        env: { ...LIMITS, TRUST_PROXY: 'true' },
        now: midWindowClock().now,
      });
    });
    afterAll(() => t.close());

    it('counts each X-Forwarded-For client separately', async () => {
      const proxy = newIp();
      const alice = { 'x-forwarded-for': '203.0.113.7' };
      const bob = { 'x-forwarded-for': '198.51.100.23' };
      for (let i = 0; i < 10; i++) await loginFrom(t.app, proxy, alice);
      expect(errorOf(await loginFrom(t.app, proxy, alice), 429).code).toBe('RATE_LIMITED');
      const forBob = await loginFrom(t.app, proxy, bob);
      expect(forBob.statusCode).toBe(401);
      expect(rateHeaders(forBob).remaining).toBe(9);
      // Without the header the proxy itself is the client, with a count of its own.
      expect(rateHeaders(await loginFrom(t.app, proxy)).remaining).toBe(9);
    });
  });

  describe('TRUST_PROXY=1 (one proxy in front)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ env: { ...LIMITS, TRUST_PROXY: '1' }, now: midWindowClock().now });
    });
    afterAll(() => t.close());

    it('keys on the address the proxy saw, whatever the client prepended', async () => {
      const proxy = newIp();
      for (let i = 0; i < 10; i++) {
        const spoofed = { 'x-forwarded-for': `10.9.9.${i}, 203.0.113.50` };
        expect((await loginFrom(t.app, proxy, spoofed)).statusCode).toBe(401);
      }
      const res = await loginFrom(t.app, proxy, { 'x-forwarded-for': '10.9.9.99, 203.0.113.50' });
      expect(errorOf(res, 429).code).toBe('RATE_LIMITED');
    });
  });

  describe('TRUST_PROXY=false', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({
        env: { ...LIMITS, TRUST_PROXY: 'false' },
        now: midWindowClock().now,
      });
    });
    afterAll(() => t.close());

    it('ignores X-Forwarded-For: every forwarded address shares the peer count', async () => {
      const peer = newIp();
      for (let i = 0; i < 10; i++) {
        const res = await loginFrom(t.app, peer, { 'x-forwarded-for': `203.0.113.${i + 1}` });
        expect(res.statusCode).toBe(401);
      }
      const res = await loginFrom(t.app, peer, { 'x-forwarded-for': '198.51.100.99' });
      expect(errorOf(res, 429).code).toBe('RATE_LIMITED');
    });
  });
});

describe('rate limits on the embedded defaults (in-process store)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite', env: LIMITS, now: midWindowClock().now });
  });
  afterAll(() => t.close());

  it('refuses the 11th login the same way', async () => {
    const ip = newIp();
    for (let i = 0; i < 10; i++) expect((await loginFrom(t.app, ip)).statusCode).toBe(401);
    const res = await loginFrom(t.app, ip);
    expect(errorOf(res, 429).code).toBe('RATE_LIMITED');
    expect(res.headers['retry-after']).toBeDefined();
  });
});

describe('RATE_LIMIT_ENABLED=false', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      backend: 'pglite',
      env: { ...LIMITS, RATE_LIMIT_LOGIN_PER_MINUTE: '1', RATE_LIMIT_ENABLED: 'false' },
    });
  });
  afterAll(() => t.close());

  it('neither limits nor sends the headers', async () => {
    const ip = newIp();
    for (let i = 0; i < 3; i++) {
      const res = await loginFrom(t.app, ip);
      expect(res.statusCode).toBe(401);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
});
