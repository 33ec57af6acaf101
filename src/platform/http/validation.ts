import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
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

/** DECISIONS 1: a validation error lists at most this many fields. */
export const MAX_FIELD_ERRORS = 20;
/** Values with more nodes than this are validated up to their first error only. */
const SMALL_VALUE_NODES = 256;

function createAjv(coerce: boolean, allErrors: boolean): Ajv {
  const ajv = new Ajv({
    allErrors,
    coerceTypes: coerce,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    // Errors carry their schema, for a pattern's own message (`x-pattern-message`).
    verbose: true,
  });
  addFormats(ajv);
  ajv.addFormat('uuid', UUID);
  ajv.addFormat('email', isEmail);
  return ajv;
}

/** A strict validator (no coercion, first error only) for JSON that arrives outside HTTP routes. */
export const strictAjv = (): Ajv => createAjv(false, false);

/** The `email` format; also used where an address arrives outside HTTP (CLI, bootstrap). */
export function isEmail(value: string): boolean {
  const email = value.trim();
  const local = email.split('@')[0] ?? '';
  return email.length <= 254 && local.length <= 64 && EMAIL.test(email);
}

/**
 * Bodies are validated strictly (no type coercion: `"true"` is not a boolean); query strings and
 * path parameters arrive as text, so they are coerced to the declared types.
 *
 * Validation stops at the first error, and only a small value (a few hundred nodes, as every
 * well-meant request is) is validated again to list all its errors: a body of 90,000 unknown keys
 * costs one check, not 90,000 error objects and a 5 MB answer.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const ajv = {
    strict: { first: createAjv(false, false), all: createAjv(false, true) },
    coercing: { first: createAjv(true, false), all: createAjv(true, true) },
  };
  return ({ schema, httpPart }) => {
    const pair = httpPart === 'body' ? ajv.strict : ajv.coercing;
    return stopAtFirstError(
      pair.first.compile(schema as object),
      pair.all.compile(schema as object),
    );
  };
}

type Validator = ValidateFunction & ((data: unknown, context?: object) => boolean);

/** `first` decides; `all` only lists the errors of a small value (Fastify reads `.errors`). */
function stopAtFirstError(first: ValidateFunction, all: ValidateFunction): Validator {
  const validate = ((data: unknown, context?: object) => {
    if (first(data, context as never)) return true;
    const listAll = isSmall(data) && !all(data, context as never);
    validate.errors = (listAll ? all.errors : first.errors) ?? null;
    return false;
  }) as Validator;
  // Fastify passes the parent of the value when the validator has a schema environment, so that
  // a root value can be coerced and defaulted in place.
  Object.assign(validate, { schemaEnv: first.schemaEnv });
  return validate;
}

/** Whether a value has at most SMALL_VALUE_NODES nodes; stops counting there. */
function isSmall(value: unknown): boolean {
  const pending: unknown[] = [value];
  let nodes = 0;
  while (pending.length > 0) {
    const node = pending.pop();
    nodes += 1;
    if (nodes > SMALL_VALUE_NODES) return false;
    if (node === null || typeof node !== 'object') continue;
    for (const key in node) {
      pending.push((node as Record<string, unknown>)[key]);
      if (pending.length + nodes > SMALL_VALUE_NODES) return false;
    }
  }
  return true;
}

const PART: Record<string, string> = {
  querystring: 'query',
  params: 'params',
  body: 'body',
  headers: 'headers',
};

/** Ajv errors as `{ field, message }` with dotted paths such as `body.email`, at most 20. */
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
    // The raw pattern means nothing to a client: the schema's own words, else a general one.
    if (e.keyword === 'pattern') message = patternMessage(e.parentSchema);
    if (e.keyword === 'anyOf' || e.keyword === 'if') continue;
    const field = [part, ...path].join('.');
    const key = `${field}\u0000${message}`;
    if (!seen.has(key)) out.push({ field, message });
    seen.add(key);
    if (out.length === MAX_FIELD_ERRORS) break;
  }
  return out.length > 0 ? out : [{ field: part, message: 'is invalid' }];
}

/** What a schema with a pattern says of a value that fails it. */
function patternMessage(schema: unknown): string {
  const own = (schema as Record<string, unknown> | undefined)?.['x-pattern-message'];
  return typeof own === 'string' ? own : 'is blank or contains characters that are not allowed';
}

const decodePointer = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');
