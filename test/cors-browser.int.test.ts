import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { PASSWORD, createUser, type TestUser } from './helpers/factories.js';

/**
 * CORS as a browser enforces it: a clinicians' web app served from another origin calls the API
 * from headless Chromium (Debian's, installed by `make tools`), through real preflights.
 */

/** A web app's origin: a server answering every path with an empty page. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>clinic app</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, origin: `http://127.0.0.1:${port}` };
}

const BROWSER_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

describe('CORS in a real browser', () => {
  let t: TestApp;
  let api: string;
  let browser: Browser;
  let user: TestUser;
  let allowed: { server: Server; origin: string };
  let other: { server: Server; origin: string };
  const methods: string[] = [];

  beforeAll(async () => {
    allowed = await pageServer();
    other = await pageServer();
    t = await createTestApp({ backend: 'pglite', env: { CORS_ORIGINS: allowed.origin } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    t.app.server.on('request', (req: { method?: string }) => methods.push(req.method ?? ''));
    api = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    user = await createUser(t.app, t.deps);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: BROWSER_FLAGS });
  });
  afterAll(async () => {
    await browser.close();
    allowed.server.close();
    other.server.close();
    await t.close();
  });

  /** Runs the calls a web app makes, in a page of `origin`; a refused fetch comes back as its error. */
  async function callFrom(origin: string) {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    const result = await page.evaluate(
      async ({ base, email, password }) => {
        try {
          const login = await fetch(`${base}/api/auth/login`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email, password }),
          });
          const tokens = (await login.json()) as { data: { access_token: string } };
          const me = await fetch(`${base}/api/auth/me`, {
            headers: { authorization: `Bearer ${tokens.data.access_token}` },
          });
          const profile = (await me.json()) as { data: { email: string } };
          const refused = await fetch(`${base}/api/auth/me`, {
            headers: { authorization: 'Bearer forged' },
          });
          const error = (await refused.json()) as { error: { code: string } };
          return {
            login: login.status,
            me: me.status,
            email: profile.data.email,
            requestId: me.headers.get('x-request-id'),
            refused: refused.status,
            code: error.error.code,
          };
        } catch (err) {
          return { failed: String(err) };
        }
      },
      { base: api, email: user.email, password: PASSWORD },
    );
    await page.close();
    return result;
  }

  it('lets the listed origin log in, call with a token and read errors, after preflights', async () => {
    methods.length = 0;
    const result = await callFrom(allowed.origin);
    expect(result).toMatchObject({
      login: 200,
      me: 200,
      email: user.email,
      refused: 401,
      code: 'UNAUTHORIZED',
    });
    expect((result as { requestId: string }).requestId).toMatch(/^[0-9a-f-]{36}$/);
    // The JSON POST and the calls with Authorization are not "simple": the browser asked first.
    expect(methods.filter((m) => m === 'OPTIONS').length).toBeGreaterThanOrEqual(2);
  });

  it('keeps another origin from reading anything: the browser refuses after the preflight', async () => {
    methods.length = 0;
    const result = await callFrom(other.origin);
    expect(result).toEqual({ failed: 'TypeError: Failed to fetch' });
    expect(methods).toEqual(['OPTIONS']); // refused at the preflight: the login never ran
  });
});
