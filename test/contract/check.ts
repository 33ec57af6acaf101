import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ERROR_STATUS } from '../../src/errors.js';
import type { WireRequest, WireResponse } from './client.js';
import type { Operation, ResponseSpec, Schema } from './spec.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * What a response may never contain: stack frames, source or install paths, and the database's
 * own error texts (which quote SQL and values).
 */
const LEAKS: [string, RegExp][] = [
  ['a stack frame', /\bat [\w$.<>[\] ]+ \(?(?:file:\/\/)?\/?[\w./\\-]+:\d+:\d+\)?/],
  [
    'an internal path',
    /node_modules|\/work\/|\/home\/|\/usr\/(?:lib|src)|(?:^|[\s"'(])\/?src\/[\w/.-]+\.[jt]s\b/,
  ],
  ['a JavaScript error', /\b(?:TypeError|ReferenceError|RangeError|SyntaxError): /],
  [
    'a database error',
    /syntax error at or near|relation "[^"]*" does not exist|violates [\w-]+ constraint|duplicate key value|invalid input syntax for type|column "[^"]*" (?:of relation|does not exist)|\bSQLSTATE\b|ECONNREFUSED/i,
  ],
];

const ERROR_CODES = new Set(Object.keys(ERROR_STATUS));
/** A request body the server should read to its end rather than close the connection on. */
const SMALL_BODY = 64 * 1024;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface MediaType {
  type: string;
  params: Map<string, string>;
}

function parseMediaType(value: string): MediaType {
  const [type = '', ...params] = value.split(';');
  return {
    type: type.trim().toLowerCase(),
    params: new Map(
      params.map((p) => {
        const [k = '', v = ''] = p.split('=');
        return [k.trim().toLowerCase(), v.trim().replace(/^"|"$/g, '')] as const;
      }),
    ),
  };
}

/** Every parameter the document names must be on the answer too; charset is the server's choice. */
function mediaTypeMatches(documented: string, actual: string): boolean {
  const doc = parseMediaType(documented);
  const got = parseMediaType(actual);
  if (doc.type !== got.type) return false;
  return [...doc.params].every(([k, v]) => got.params.get(k) === v);
}

const isJson = (type: string) =>
  /^application\/(?:[\w.-]+\+)?json$/.test(parseMediaType(type).type);

/** Checks answers against the document with Ajv (draft 2020-12, formats on). */
export class ResponseChecker {
  private readonly ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true });
  private readonly compiled = new WeakMap<Schema, ValidateFunction>();

  constructor() {
    addFormats(this.ajv);
  }

  private validator(schema: Schema): ValidateFunction {
    let validate = this.compiled.get(schema);
    if (validate === undefined) {
      validate = this.ajv.compile(schema);
      this.compiled.set(schema, validate);
    }
    return validate;
  }

  /** Whether a value satisfies a schema of the document (used to tell a bad request apart). */
  valid(schema: Schema, value: unknown): boolean {
    return this.validator(schema)(value);
  }

  /** Every way the answer breaks the contract; empty when it keeps it. */
  check(op: Operation, req: WireRequest, res: WireResponse): string[] {
    const problems: string[] = [];
    if (res.status >= 500) problems.push(`answered ${res.status}`);
    const spec = responseSpec(op, res.status);
    if (spec === undefined) {
      problems.push(
        `status ${res.status} is not documented (documented: ${[...op.responses.keys()].join(', ')})`,
      );
    }
    const requestId = res.headers['x-request-id'];
    if (typeof requestId !== 'string' || requestId === '') problems.push('no X-Request-ID header');
    // Closing on a small request races a keep-alive client's next write (EPIPE, answer lost).
    if ((req.body?.length ?? 0) <= SMALL_BODY && res.headers.connection === 'close') {
      problems.push('closed the connection after a small request');
    }

    const text = res.body.toString('utf8');
    if (res.status >= 400) {
      for (const [what, pattern] of LEAKS) if (pattern.test(text)) problems.push(`leaks ${what}`);
    }
    if (req.method === 'HEAD' || res.body.length === 0) {
      if (req.method === 'HEAD' && res.body.length > 0) problems.push('HEAD answer has a body');
      if (
        req.method !== 'HEAD' &&
        spec !== undefined &&
        spec.content.size > 0 &&
        res.status !== 204
      ) {
        problems.push('empty body where the document promises content');
      }
      return problems;
    }
    const contentType = res.headers['content-type'] ?? '';
    if (spec !== undefined) problems.push(...this.checkBody(spec, contentType, text));
    if (isJson(contentType)) problems.push(...envelopeProblems(op, res, text, requestId));
    return problems;
  }

  private checkBody(spec: ResponseSpec, contentType: string, text: string): string[] {
    const documented = [...spec.content.keys()];
    const match = documented.find((type) => mediaTypeMatches(type, contentType));
    if (match === undefined) {
      return [
        `content-type ${contentType || '(none)'} is not documented (${documented.join(', ') || 'no body'})`,
      ];
    }
    const schema = spec.content.get(match);
    if (schema === undefined) return [];
    let value: unknown = text;
    if (isJson(match)) {
      try {
        value = JSON.parse(text);
      } catch {
        return ['body is not JSON'];
      }
    }
    const validate = this.validator(schema);
    if (validate(value)) return [];
    const errors = (validate.errors ?? []).slice(0, 5);
    return errors.map(
      (e) => `body${e.instancePath} ${e.message ?? 'is invalid'} (schema ${e.schemaPath})`,
    );
  }
}

function responseSpec(op: Operation, status: number): ResponseSpec | undefined {
  return (
    op.responses.get(String(status)) ??
    op.responses.get(`${String(status)[0] ?? ''}XX`) ??
    op.responses.get('default')
  );
}

/**
 * DECISIONS 1: every JSON answer under /api and /conversations, and every error anywhere, is the
 * envelope; its request id is the X-Request-ID header; an error's code is one of the documented
 * codes and agrees with the status.
 */
function envelopeProblems(
  op: Operation,
  res: WireResponse,
  text: string,
  requestId: unknown,
): string[] {
  const enveloped = res.status >= 400 || /^\/(?:api|conversations)(?:\/|$)/.test(op.path);
  if (!enveloped) return [];
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return ['body is not JSON'];
  }
  const problems: string[] = [];
  const meta = body.meta as { request_id?: unknown; timestamp?: unknown } | undefined;
  if (
    typeof body.success !== 'boolean' ||
    !('data' in body) ||
    !('error' in body) ||
    meta === undefined
  ) {
    return ['not the envelope { success, data, error, meta }'];
  }
  if (meta.request_id !== requestId) problems.push('meta.request_id differs from X-Request-ID');
  if (typeof meta.timestamp !== 'string' || !ISO_UTC.test(meta.timestamp)) {
    problems.push('meta.timestamp is not ISO 8601 UTC with milliseconds');
  }
  if (typeof requestId === 'string' && !UUID.test(requestId))
    problems.push('X-Request-ID is not a UUID');
  if (body.success !== res.status < 400)
    problems.push(`success is ${String(body.success)} on ${res.status}`);
  if (res.status >= 400) {
    const error = body.error as { code?: unknown; message?: unknown } | null;
    const code = typeof error?.code === 'string' ? error.code : '';
    if (!ERROR_CODES.has(code))
      problems.push(`error code ${code || '(none)'} is not a documented code`);
    else if (ERROR_STATUS[code as keyof typeof ERROR_STATUS] !== res.status) {
      problems.push(`error code ${code} does not go with status ${res.status}`);
    }
    if (body.data !== null) problems.push('data is not null on an error');
  }
  return problems;
}
