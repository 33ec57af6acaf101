import { inject } from 'light-my-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { errorOf } from './helpers/factories.js';

interface OpenApiOperation {
  requestBody?: unknown;
  security?: unknown[];
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

describe('HTTP contract', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      backend: 'pglite',
      beforeReady: (app) => {
        app.get(
          '/api/test/boom',
          { config: { auth: 'none' }, schema: { operationId: 'testBoom' } },
          () => {
            throw new Error('relation "secret_table" does not exist at SELECT * FROM secret_table');
          },
        );
      },
    });
  });
  afterAll(() => t.close());

  it('wraps an internal error in the envelope without leaking its message or stack', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/test/boom' });
    const err = errorOf(res, 500);
    expect(err).toEqual({
      code: 'INTERNAL_ERROR',
      message: 'Internal server error',
      details: null,
    });
    expect(res.body).not.toMatch(/secret_table|at |\.ts/);
  });

  it('answers unknown routes with a 404 envelope, whatever the method', async () => {
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      const err = errorOf(await t.app.inject({ method, url: '/api/nothing/here?x=1' }), 404);
      expect(err.code).toBe('NOT_FOUND');
    }
  });

  it('stamps every envelope with an ISO 8601 UTC timestamp and the request id', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: { 'x-request-id': 'client-abc.123' },
    });
    const body = res.json<{ meta: { request_id: string; timestamp: string } }>();
    expect(res.headers['x-request-id']).toBe('client-abc.123');
    expect(body.meta.request_id).toBe('client-abc.123');
    expect(body.meta.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('documents every registered route in OpenAPI with request and response schemas', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      openapi: string;
      paths: Record<string, Record<string, OpenApiOperation>>;
    }>();
    expect(spec.openapi).toBe('3.1.0');
    const apiRoutes = t.routes.filter((r) => !r.url.startsWith('/api/test/'));
    expect(apiRoutes.length).toBeGreaterThan(15);
    for (const route of apiRoutes) {
      const path = route.url.replace(/:([a-z_]+)/g, '{$1}');
      const op = spec.paths[path]?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${path}`).toBeDefined();
      if (op === undefined) continue;
      const success = Object.keys(op.responses).filter((s) => s.startsWith('2'));
      expect(success.length, `${route.method} ${path} success response`).toBeGreaterThan(0);
      expect(Object.keys(op.responses), `${route.method} ${path}`).toContain('500');
      const roles = route.auth === 'admin' ? ['admin'] : [];
      const security = route.auth === 'none' ? [] : [{ bearerAuth: roles }];
      expect(op.security, `${route.method} ${path}`).toEqual(security);
      if (route.auth !== 'none') expect(Object.keys(op.responses)).toContain('401');
      if (route.auth === 'admin') expect(Object.keys(op.responses)).toContain('403');
      if (route.rateLimited) expect(Object.keys(op.responses)).toContain('429');
    }
    const register = spec.paths['/api/auth/register']?.post;
    expect(JSON.stringify(register?.requestBody)).toContain('"additionalProperties":false');
  });

  it('serves Swagger UI and ReDoc from local packages, with no CDN', async () => {
    const docs = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    const redoc = await t.app.inject({ method: 'GET', url: '/redoc' });
    expect(redoc.statusCode).toBe(200);
    expect(redoc.body).toContain('/redoc/redoc.standalone.js');
    for (const page of [docs.body, redoc.body]) expect(page).not.toMatch(/src="https?:\/\//);
    const bundle = await t.app.inject({ method: 'GET', url: '/redoc/redoc.standalone.js' });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers['content-type']).toContain('javascript');
    expect(bundle.body.length).toBeGreaterThan(100_000);
    const ui = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' });
    expect(ui.statusCode).toBe(200);
  });

  it('takes an empty JSON body as no body', async () => {
    const json = { 'content-type': 'application/json' };
    const logout = await t.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: json,
      payload: '',
    });
    expect(errorOf(logout, 401).code).toBe('UNAUTHORIZED'); // reached the auth check, not a 422
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: json,
      payload: '',
    });
    expect(errorOf(login, 422).details).toEqual([{ field: 'body', message: 'must be object' }]);
  });
});

describe('while shutting down', () => {
  it('answers new requests with a 503 envelope and lets in-flight ones finish', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const t = await createTestApp({
      backend: 'pglite',
      beforeReady: (app) => {
        app.get(
          '/api/test/slow',
          { config: { auth: 'none' }, schema: { operationId: 'testSlow' } },
          async () => {
            await gate;
            return { ok: true };
          },
        );
      },
    });
    const inFlight = t.app.inject({ method: 'GET', url: '/api/test/slow' });
    await new Promise((r) => setTimeout(r, 50));
    const closing = t.app.close();
    await new Promise((r) => setTimeout(r, 50)); // close() runs its preClose hooks
    // Fastify's inject refuses a closing app; a request on a connection that is still open goes
    // through the router, which is what this dispatches to.
    const refused = await inject(
      (req, res) => {
        t.app.routing(req, res);
      },
      { method: 'GET', url: '/health' },
    );
    expect(errorOf(refused, 503).code).toBe('SERVICE_UNAVAILABLE');
    release();
    expect((await inFlight).statusCode).toBe(200);
    await closing;
    await t.close();
  });
});
