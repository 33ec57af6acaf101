import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpsApp } from '../src/modules/ops/app.js';
import type { App } from '../src/platform/http/types.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, type TestUser } from './helpers/factories.js';

/**
 * DECISIONS 1: a list answers `{ items, total, ... }` plus the paging fields it names. The routes
 * checked are not listed here: every GET of the committed OpenAPI documents whose success payload
 * (the envelope's `data`, or the bare body) has an `items` array is one, so a list route added
 * later is checked without anyone editing this test. Each must document `total`, and each is
 * called through its app with an administrator's token, its path parameters filled with ids this
 * test makes; the live body must hold `items`, an integer `total` no smaller than the items, and
 * every field its schema requires.
 */

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
}
interface Operation {
  parameters?: Parameter[];
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

interface ListRoute {
  key: string;
  url: string;
  app: 'api' | 'ops';
  op: Operation;
  enveloped: boolean;
  /** The payload's shapes that are lists (one, or the members of a union). */
  lists: Schema[];
}

const DOCUMENTS = { api: 'docs/openapi.json', ops: 'docs/openapi-ops.json' } as const;

function resolver(document: Document) {
  return (schema: Schema | undefined): Schema | undefined => {
    let s = schema;
    while (s?.$ref !== undefined) {
      const name = s.$ref.replace('#/components/schemas/', '');
      s = document.components?.schemas?.[name];
    }
    return s;
  };
}

/** The GET operations whose success payload holds an `items` array, in both documents. */
function listRoutes(): ListRoute[] {
  return Object.entries(DOCUMENTS).flatMap(([app, file]) => {
    const document = JSON.parse(
      readFileSync(path.join(import.meta.dirname, '..', file), 'utf8'),
    ) as Document;
    const resolve = resolver(document);
    return Object.entries(document.paths).flatMap(([url, item]) => {
      const op = item.get;
      if (op === undefined) return [];
      const success = Object.entries(op.responses).find(([code]) => /^2\d\d$/.test(code))?.[1];
      const body = resolve(success?.content?.['application/json']?.schema);
      if (body === undefined) return [];
      const enveloped =
        body.properties?.success !== undefined && body.properties.data !== undefined;
      const payload = resolve(enveloped ? body.properties?.data : body);
      const shapes = (payload?.anyOf ?? payload?.oneOf ?? payload?.allOf ?? [payload]).map(resolve);
      const lists = shapes.filter(
        (s): s is Schema => s !== undefined && resolve(s.properties?.items)?.type === 'array',
      );
      if (lists.length === 0) return [];
      return [
        { key: `GET ${url} (${file})`, url, app: app as 'api' | 'ops', op, enveloped, lists },
      ];
    });
  });
}

const routes = listRoutes();

describe('every list route answers { items, total } (DECISIONS 1)', () => {
  let t: TestApp;
  let ops: App;
  let admin: TestUser;
  /** Path parameters this test can fill, with ids of things it made. */
  const pathValues: Record<string, string> = {};
  /** Required query parameters this test can fill. */
  const queryValues: Record<string, string> = { q: 'blood pressure target' };

  beforeAll(async () => {
    t = await createTestApp();
    ({ app: ops } = await buildOpsApp(t.deps));
    await ops.ready();
    admin = await createUser(t.app, t.deps, { admin: true });
    const subject = await createUser(t.app, t.deps);
    const call = (method: 'PUT' | 'POST', url: string, payload: object) =>
      t.app.inject({ method, url, payload, headers: bearer(admin.access) });
    // Entries in the user's histories, so those lists are not empty.
    const panel = `/api/admin/panel/users/${subject.id}`;
    dataOf(await call('PUT', panel, { admin_role: 'admin', reason: 'Covers a shift' }));
    dataOf(await call('PUT', panel, { is_active: false, reason: 'Left' }));
    dataOf(await call('PUT', panel, { is_active: true, reason: 'Back' }));
    const conversation = dataOf<{ id: string }>(
      await call('POST', '/conversations', { title: 'Lists' }),
    );
    Object.assign(pathValues, { user_id: subject.id, conversation_id: conversation.id });
  });
  afterAll(async () => {
    await ops.close();
    await t.close();
  });

  it('finds the list routes in the documents, the two user histories among them', () => {
    const keys = routes.map((r) => r.key);
    expect(keys).toContain('GET /api/admin/panel/users/{user_id}/role-history (docs/openapi.json)');
    expect(keys).toContain('GET /api/admin/panel/users/{user_id}/lock-reasons (docs/openapi.json)');
  });

  it.each(routes.map((r) => [r.key, r] as const))('%s', async (_key, route) => {
    for (const shape of route.lists) {
      expect(shape.required, 'the schema requires total').toContain('total');
      expect(shape.properties?.total?.type).toBe('integer');
    }
    const url = route.url.replace(/\{(\w+)\}/g, (_match, name: string) => {
      const value = pathValues[name];
      if (value === undefined) {
        throw new Error(`cannot fill {${name}} of ${route.key}: make one in beforeAll`);
      }
      return encodeURIComponent(value);
    });
    const query = (route.op.parameters ?? [])
      .filter((p) => p.in === 'query' && p.required === true)
      .map((p) => {
        const value = queryValues[p.name];
        if (value === undefined) {
          throw new Error(`cannot fill the required query ${p.name} of ${route.key}`);
        }
        return `${p.name}=${encodeURIComponent(value)}`;
      });
    const app = route.app === 'api' ? t.app : ops;
    const res = await app.inject({
      method: 'GET',
      url: query.length === 0 ? url : `${url}?${query.join('&')}`,
      headers: bearer(admin.access),
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = route.enveloped ? dataOf(res) : res.json<Record<string, unknown>>();
    expect(Array.isArray(body.items), 'items is an array').toBe(true);
    const items = body.items as unknown[];
    expect(Number.isInteger(body.total), 'total is an integer').toBe(true);
    expect(body.total).toBeGreaterThanOrEqual(items.length);
    // The fields its (matching) list shape requires, paging fields among them.
    const fits = route.lists.some((shape) => (shape.required ?? []).every((f) => f in body));
    expect(fits, `fields of ${JSON.stringify(route.lists.map((s) => s.required))}`).toBe(true);
  });
});
