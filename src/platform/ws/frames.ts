import { strictAjv } from '../http/validation.js';

/**
 * Text frames of a socket protocol (chat, voice): JSON objects whose `type` picks a schema, checked
 * before anything acts on them. One parser per protocol, built from its schemas.
 */

export type Parsed<F> =
  { ok: true; frame: F } | { ok: false; message: string; requestRef: string | undefined };

const ajv = strictAjv();

/** A parser of frames `F`, one schema per `type`; it never throws. */
export function frameParser<F>(schemas: Record<string, object>): (text: string) => Parsed<F> {
  const validators = new Map(
    Object.entries(schemas).map(([type, schema]) => [type, ajv.compile(schema)]),
  );
  const known = Object.keys(schemas).join(', ');
  return (text) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { ok: false, message: 'Frame is not valid JSON', requestRef: undefined };
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return { ok: false, message: 'Frame must be a JSON object', requestRef: undefined };
    }
    const record = value as Record<string, unknown>;
    const ref =
      typeof record.request_ref === 'string' ? record.request_ref.slice(0, 128) : undefined;
    const type = record.type;
    const validate = typeof type === 'string' ? validators.get(type) : undefined;
    if (validate === undefined) {
      return {
        ok: false,
        message: `Unknown frame type; expected one of ${known}`,
        requestRef: ref,
      };
    }
    if (!validate(value)) return { ok: false, message: describe(validate.errors), requestRef: ref };
    return { ok: true, frame: value as F };
  };
}

function describe(
  errors:
    | { instancePath: string; keyword: string; message?: string; params: Record<string, unknown> }[]
    | null
    | undefined,
): string {
  const e = errors?.[0];
  if (e === undefined) return 'Frame is invalid';
  const field = e.instancePath.split('/').filter(Boolean).join('.');
  if (e.keyword === 'additionalProperties') {
    return `${String(e.params.additionalProperty)} is not an allowed field`;
  }
  if (e.keyword === 'required') return `${String(e.params.missingProperty)} is required`;
  if (e.keyword === 'pattern')
    return `${field} is blank or contains characters that are not allowed`;
  return `${field === '' ? 'frame' : field} ${e.message ?? 'is invalid'}`;
}
