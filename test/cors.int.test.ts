import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, errorOf, type TestUser } from './helpers/factories.js';

const APP = 'https://clinic-app.example.com';
const OTHER = 'https://elsewhere.example.org';

const preflight = (origin: string, method = 'POST', headers = 'authorization,content-type') => ({
  origin,
  'access-control-request-method': method,
  'access-control-request-headers': headers,
});

describe('CORS with no CORS_ORIGINS (the default): same-origin only', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite' });
  });
  afterAll(() => t.close());

  it('sends no CORS headers, so browsers keep other origins from reading answers', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health', headers: { origin: APP } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers a preflight as the unknown route it is', async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/auth/login',
      headers: preflight(APP),
    });
    expect(errorOf(res, 404).code).toBe('NOT_FOUND');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('CORS with an allow-list', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await createTestApp({
      backend: 'pglite',
      env: { CORS_ORIGINS: 'https://Clinic-App.example.com,http://localhost:5173' },
    });
    user = await createUser(t.app, t.deps);
  });
  afterAll(() => t.close());

  it('answers a preflight from a listed origin with 204 and what the browser asks about', async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/conversations',
      headers: preflight(APP),
    });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT, PATCH, DELETE');
    expect(res.headers['access-control-allow-headers']).toBe(
      'Authorization, Content-Type, X-Request-ID',
    );
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers.vary).toContain('Origin');
  });

  it('needs no token for a preflight, even on an administrators’ route', async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/admin/kb/documents',
      headers: preflight(APP, 'DELETE'),
    });
    expect(res.statusCode).toBe(204);
  });

  it('lets a listed origin read answers and the headers a client app needs', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: { origin: APP, ...bearer(user.access) },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-expose-headers']).toBe(
      'X-Request-ID, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After',
    );
  });

  it('lets a listed origin read an error too (a 401 envelope)', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: { origin: APP },
    });
    expect(errorOf(res, 401).code).toBe('UNAUTHORIZED');
    expect(res.headers['access-control-allow-origin']).toBe(APP);
  });

  it('refuses an origin that is not listed: no headers, no preflight', async () => {
    const get = await t.app.inject({ method: 'GET', url: '/health', headers: { origin: OTHER } });
    expect(get.statusCode).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
    const options = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/auth/login',
      headers: preflight(OTHER),
    });
    expect(errorOf(options, 404).code).toBe('NOT_FOUND');
    expect(options.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('compares origins exactly: another port or scheme is another origin', async () => {
    for (const origin of [
      'http://localhost:5174',
      'http://clinic-app.example.com',
      `${APP}.evil.io`,
    ]) {
      const res = await t.app.inject({ method: 'GET', url: '/health', headers: { origin } });
      expect(res.headers['access-control-allow-origin'], origin).toBeUndefined();
    }
    const local = await t.app.inject({
      method: 'GET',
      url: '/health',
      headers: { origin: 'http://localhost:5173' },
    });
    expect(local.headers['access-control-allow-origin']).toBe('http://localhost:5173');
  });

  it('answers an OPTIONS request that is not a preflight (no Origin) as an unknown route', async () => {
    const res = await t.app.inject({ method: 'OPTIONS', url: '/health' });
    expect(errorOf(res, 404).code).toBe('NOT_FOUND');
  });
});

describe('CORS_ORIGINS=*', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite', env: { CORS_ORIGINS: '*' } });
  });
  afterAll(() => t.close());

  it('lets any origin read answers, without credentials', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health', headers: { origin: OTHER } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const options = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/auth/login',
      headers: preflight(OTHER),
    });
    expect(options.statusCode).toBe(204);
    expect(options.headers['access-control-allow-credentials']).toBeUndefined();
  });
});
