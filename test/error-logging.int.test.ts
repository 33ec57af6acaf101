import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { users } from '../src/db/schema/index.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createUser, errorOf, type TestUser } from './helpers/factories.js';

/**
 * Issue 9, item 8: a failed query is logged by its class, codes and a redacted message, never with
 * the values it was given; and a client error raised by the framework or a plugin with a status
 * of its own keeps that status instead of becoming a 500.
 */

const SECRET = 'leaked.patient@example.com';

function statusError(statusCode: number, code: string, message: string): Error {
  return Object.assign(new Error(message), { statusCode, code });
}

describe('errors in logs and answers', () => {
  let t: TestApp;
  let user: TestUser;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    t = await createTestApp({
      env: { LOG_LEVEL: 'error' },
      logDestination: {
        write: (line: string) => {
          lines.push(JSON.parse(line) as Record<string, unknown>);
        },
      },
      beforeReady: (app) => {
        const route = (url: string, operationId: string, fail: () => Promise<unknown>) => {
          app.get(url, { config: { auth: 'none' }, schema: { operationId } }, fail);
        };
        route('/api/test/bad-cast', 'testBadCast', () =>
          t.deps.database.db.execute(sql`select ${SECRET}::int`),
        );
        route('/api/test/duplicate', 'testDuplicate', () =>
          t.deps.database.db.insert(users).values({
            id: user.id,
            email: SECRET,
            fullName: 'Duplicate',
            passwordHash: 'x',
          }),
        );
        for (const [status, code] of [
          [406, 'FST_INVALID_MULTIPART_CONTENT_TYPE'],
          [408, 'FST_TEST_TIMEOUT'],
          [409, 'FST_TEST_CONFLICT'],
          [418, 'FST_TEST_TEAPOT'],
        ] as const) {
          route(`/api/test/status-${String(status)}`, `testStatus${String(status)}`, () => {
            throw statusError(status, code, `refused: ${SECRET}`);
          });
        }
      },
    });
    user = await createUser(t.app, t.deps);
  });
  afterAll(() => t.close());

  it.each([
    ['/api/test/bad-cast', '22P02'],
    ['/api/test/duplicate', '23505'],
  ])('logs the failed query of %s without its parameters', async (url, sqlState) => {
    lines.length = 0;
    const res = await t.app.inject({ method: 'GET', url });
    expect(errorOf(res, 500).code).toBe('INTERNAL_ERROR');
    expect(res.body).not.toContain(SECRET);
    const logged = lines.find((l) => l.msg === 'request failed');
    expect(logged).toBeDefined();
    const text = JSON.stringify(logged);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('params');
    const err = logged?.err as { type: string; message: string; cause?: { code?: string } };
    expect(err.type).toBe('DrizzleQueryError');
    expect(err.message).toMatch(/^Failed query: /);
    expect(err.cause?.code).toBe(sqlState);
  });

  it.each([406, 408, 418])(
    'answers a framework error of status %i with that status',
    async (status) => {
      const res = await t.app.inject({ method: 'GET', url: `/api/test/status-${String(status)}` });
      const error = errorOf(res, status);
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.message).not.toContain(SECRET);
    },
  );

  it('maps a framework 409 to CONFLICT', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/test/status-409' });
    expect(errorOf(res, 409).code).toBe('CONFLICT');
  });
});
