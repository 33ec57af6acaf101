import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * What client generators and validating proxies need from the committed document (the contract
 * suite checks that the service serves exactly this file): stable camelCase operation ids, explicit
 * security, a server, every status the layers below the routes can answer, and parameters that are
 * required only when the server has no default.
 */

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: { default?: unknown };
}
interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: unknown;
  responses: Record<string, { content?: Record<string, unknown> }>;
}
interface Document {
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
}

const document = JSON.parse(
  readFileSync(path.join(import.meta.dirname, '..', 'docs', 'openapi.json'), 'utf8'),
) as Document;
const operations = Object.entries(document.paths).flatMap(([url, item]) =>
  Object.entries(item).map(([method, op]) => ({
    key: `${method.toUpperCase()} ${url}`,
    method,
    url,
    op,
  })),
);
const PUBLIC = new Set([
  'GET /health',
  'HEAD /health',
  'GET /ready',
  'HEAD /ready',
  'GET /metrics',
  'POST /api/auth/register',
  'POST /api/auth/login',
  'POST /api/auth/refresh',
]);

describe('docs/openapi.json', () => {
  it('names the server', () => {
    expect(document.servers?.length).toBeGreaterThan(0);
  });

  it('gives every operation a unique camelCase operationId', () => {
    const ids = operations.map(({ op }) => op.operationId ?? '');
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z0-9]+$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('says `security: []` on exactly the public operations and names the admin role elsewhere', () => {
    for (const { key, op, url } of operations) {
      if (PUBLIC.has(key)) expect(op.security, key).toEqual([]);
      else if (url.startsWith('/api/admin/') || /^\/api\/users(\/\{user_id\}.*)?$/.test(url)) {
        expect(op.security, key).toEqual([{ bearerAuth: ['admin'] }]);
      } else expect(op.security, key).toEqual([{ bearerAuth: [] }]);
    }
  });

  it('documents 413 and 415 on every operation that can receive a body', () => {
    for (const { key, method, op } of operations) {
      if (!['post', 'put', 'patch', 'delete'].includes(method)) continue;
      expect(Object.keys(op.responses), key).toEqual(expect.arrayContaining(['413', '415']));
    }
  });

  it('documents 422, 500 and 503 everywhere, and 401 wherever a token is needed', () => {
    for (const { key, op } of operations) {
      const statuses = Object.keys(op.responses);
      expect(statuses, key).toEqual(expect.arrayContaining(['422', '500', '503']));
      if (!PUBLIC.has(key)) expect(statuses, key).toContain('401');
    }
  });

  it('never marks a parameter with a default as required', () => {
    for (const { key, op } of operations) {
      for (const p of op.parameters ?? []) {
        if (p.schema?.default !== undefined) expect(p.required, `${key} ${p.name}`).not.toBe(true);
      }
    }
  });

  it('documents /metrics as the Prometheus text format, version 0.0.4', () => {
    const ok = document.paths['/metrics']?.get?.responses['200'];
    expect(Object.keys(ok?.content ?? {})).toEqual(['text/plain; version=0.0.4']);
  });

  it('documents HEAD /health and HEAD /ready with the statuses of GET and no body', () => {
    for (const url of ['/health', '/ready']) {
      const get = document.paths[url]?.get;
      const head = document.paths[url]?.head;
      expect(Object.keys(head?.responses ?? {})).toEqual(Object.keys(get?.responses ?? {}));
      for (const response of Object.values(head?.responses ?? {})) {
        expect(response.content).toBeUndefined();
      }
    }
  });
});
