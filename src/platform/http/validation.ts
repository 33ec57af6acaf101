import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from '../../errors.js';

// ajv-formats ships CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** A bare UUID: ajv-formats also accepts a `urn:uuid:` prefix, which PostgreSQL's uuid type refuses. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A practical address check (RFC 5321 lengths; no quoted local parts), after trimming. */
const EMAIL =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

function createAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  });
  addFormats(ajv);
  ajv.addFormat('uuid', UUID);
  ajv.addFormat('email', isEmail);
  return ajv;
}

/** The `email` format; also used where an address arrives outside HTTP (CLI, bootstrap). */
export function isEmail(value: string): boolean {
  const email = value.trim();
  const local = email.split('@')[0] ?? '';
  return email.length <= 254 && local.length <= 64 && EMAIL.test(email);
}

/**
 * Bodies are validated strictly (no type coercion: `"true"` is not a boolean); query strings and
 * path parameters arrive as text, so they are coerced to the declared types.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = createAjv(false);
  const coercing = createAjv(true);
  return ({ schema, httpPart }) =>
    (httpPart === 'body' ? strict : coercing).compile(schema as object);
}

const PART: Record<string, string> = {
  querystring: 'query',
  params: 'params',
  body: 'body',
  headers: 'headers',
};

/** Ajv errors as `{ field, message }` with dotted paths such as `body.email`. */
export function fieldErrors(errors: readonly ErrorObject[], context: string): FieldError[] {
  const part = PART[context] ?? context;
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of errors) {
    const path = e.instancePath.split('/').filter(Boolean).map(decodePointer);
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') path.push(String(e.params.missingProperty));
    if (e.keyword === 'additionalProperties') {
      path.push(String(e.params.additionalProperty));
      message = 'is not an allowed field';
    }
    if (e.keyword === 'required') message = 'is required';
    // The raw pattern means nothing to a client.
    if (e.keyword === 'pattern') message = 'is blank or contains characters that are not allowed';
    if (e.keyword === 'anyOf' || e.keyword === 'if') continue;
    const field = [part, ...path].join('.');
    const key = `${field}\u0000${message}`;
    if (!seen.has(key)) out.push({ field, message });
    seen.add(key);
  }
  return out.length > 0 ? out : [{ field: part, message: 'is invalid' }];
}

const decodePointer = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');
