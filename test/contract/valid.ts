import { generateSync } from 'json-schema-faker';
import type { Draft, DraftBody, FormPart } from './draft.js';
import type { Rng } from './random.js';
import type { Operation, Parameter, Schema } from './spec.js';

/**
 * Values the fuzzer knows are real for the caller (its conversation, a user, a document, its
 * refresh token...), by parameter or field name. A generated request uses one of them half the
 * time, so requests reach past "not found" into the code behind; a name with no known values
 * (a route added later) gets values generated from its schema only.
 */
export type Known = Record<string, readonly string[]>;

function fake(schema: Schema, rng: Rng): unknown {
  const seed = rng.seed();
  try {
    return generateSync(schema, { seed, optionalsProbability: 0.5, maxLength: 64 });
  } catch {
    // json-schema-faker gives up on `minProperties` when it left optional properties out.
    return generateSync(schema, { seed, alwaysFakeOptionals: true, maxLength: 64 });
  }
}

function valueFor(name: string, schema: Schema, known: Known, rng: Rng): unknown {
  const values = known[name];
  if (values !== undefined && values.length > 0 && rng.next() < 0.5) return rng.pick(values);
  return fake(schema, rng);
}

const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

function generateQuery(params: Parameter[], known: Known, rng: Rng): [string, string][] {
  const pairs: [string, string][] = [];
  for (const p of params) {
    if (!p.required && rng.next() < 0.5) continue;
    pairs.push([p.name, text(valueFor(p.name, p.schema, known, rng))]);
  }
  return pairs;
}

/** A JSON body from its schema, known values swapped in for the fields that have them. */
function generateJson(schema: Schema, known: Known, rng: Rng): unknown {
  const value = fake(schema, rng);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const object = value as Record<string, unknown>;
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  for (const name of Object.keys(properties)) {
    const values = known[name];
    if (values !== undefined && values.length > 0 && rng.next() < 0.5)
      object[name] = rng.pick(values);
  }
  return object;
}

/** A form from its schema: binary fields become files of UTF-8 text, the rest plain fields. */
function generateForm(schema: Schema, known: Known, rng: Rng): FormPart[] {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  const parts: FormPart[] = [];
  for (const [name, property] of Object.entries(properties)) {
    if (!required.has(name) && rng.next() < 0.5) continue;
    if (property.format === 'binary' || property.contentMediaType !== undefined) {
      const words = fake({ type: 'string', minLength: 20, maxLength: 400 }, rng);
      parts.push({ name, value: `Clinical note ${text(words)}\n`, filename: 'note.txt' });
    } else {
      parts.push({ name, value: text(valueFor(name, property, known, rng)) });
    }
  }
  return parts;
}

function generateBody(op: Operation, known: Known, rng: Rng): DraftBody {
  if (op.body === null) return { kind: 'none' };
  const json = op.body.content.get('application/json');
  if (json !== undefined) return { kind: 'json', value: generateJson(json, known, rng) };
  const form = op.body.content.get('multipart/form-data');
  if (form !== undefined) return { kind: 'form', parts: generateForm(form, known, rng) };
  return { kind: 'none' };
}

/** A request the document says is valid, from the operation's schemas and the known values. */
export function validDraft(op: Operation, known: Known, rng: Rng): Draft {
  const params: Record<string, string> = {};
  for (const p of op.parameters.filter((p) => p.in === 'path')) {
    params[p.name] = text(valueFor(p.name, p.schema, known, rng));
  }
  const query = generateQuery(
    op.parameters.filter((p) => p.in === 'query'),
    known,
    rng,
  );
  return { params, rawParams: {}, query, rawQuery: '', body: generateBody(op, known, rng) };
}
