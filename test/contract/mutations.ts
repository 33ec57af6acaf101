import type { Case, Draft, DraftBody, FormPart } from './draft.js';
import type { Rng } from './random.js';
import type { Operation, Parameter, Schema } from './spec.js';

/**
 * Requests a hostile or careless client sends, each made from a valid one by one change: missing,
 * wrong-type, oversize and extra fields; malformed, null and deeply nested JSON; bodies over 1 MiB;
 * wrong content types; bad and very long path ids; out-of-range and unknown query values; bad
 * percent-encoding. Which ones an operation gets follows from its document entry alone.
 */

const MIB = 1024 * 1024;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Text a careless or hostile client puts in a string field. */
const STRANGE_TEXT = [
  '',
  ' ',
  '\u0000',
  'line\nbreak',
  '\u202eevil\u202c',
  'zero\u200bwidth',
  '🩺🫀💊',
  'Ω≈ç√∫˜µ≤≥÷',
  "'; DROP TABLE users; --",
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '%00%E0%A4%A',
];

const BAD_IDS = ['0', 'abc', 'é', '\u0000', '..', "' OR '1'='1", ' ', '🩺', 'a/b', '-1', 'null'];
const BAD_PERCENT = ['%E0%A4%A', '%zz', '%', '%C0%AF', '%ED%A0%80'];

const clone = (draft: Draft): Draft => structuredClone(draft);
const edited = (draft: Draft, change: (d: Draft) => void): Draft => {
  const next = clone(draft);
  change(next);
  return next;
};

const props = (schema: Schema) => (schema.properties ?? {}) as Record<string, Schema>;
const requiredOf = (schema: Schema) => (schema.required ?? []) as string[];
const typeOf = (schema: Schema) =>
  (Array.isArray(schema.type) ? schema.type[0] : schema.type) as string | undefined;

/** Values of another JSON type than the schema's. */
function wrongTypes(schema: Schema): unknown[] {
  switch (typeOf(schema)) {
    case 'string':
      return [12345, true, ['a'], { a: 1 }, null];
    case 'integer':
    case 'number':
      return ['12', true, [1], null];
    case 'boolean':
      return ['true', 1, null];
    case 'array':
      return [{}, 'a', null];
    case 'object':
      return [[], 'a', 1, null];
    default:
      return [null];
  }
}

/** Values past the schema's bounds, or simply huge. */
function oversize(schema: Schema): unknown[] {
  const type = typeOf(schema);
  if (type === 'string') {
    const max = typeof schema.maxLength === 'number' ? schema.maxLength : 100_000;
    return ['x'.repeat(max + 1), '🩺'.repeat(max + 1)];
  }
  if (type === 'integer' || type === 'number') {
    const out: unknown[] = [1e308, -1e308, 2 ** 53 + 1];
    if (typeof schema.maximum === 'number') out.push(schema.maximum + 1);
    if (typeof schema.minimum === 'number') out.push(schema.minimum - 1);
    if (type === 'integer') out.push(1.5);
    return out;
  }
  return [];
}

/** Query text outside a parameter's schema. */
function badQueryValues(p: Parameter): string[] {
  const s = p.schema;
  const type = typeOf(s);
  if (type === 'integer' || type === 'number') {
    const out = ['abc', '', '1.5', '1e3', '0x10', '99999999999999999999999', 'NaN', '-0.0'];
    if (typeof s.maximum === 'number') out.push(String(s.maximum + 1));
    if (typeof s.minimum === 'number') out.push(String(s.minimum - 1));
    return out;
  }
  if (type === 'boolean') return ['maybe', '2', '', 'TRUE '];
  const out = [
    '\u0000',
    '',
    'x'.repeat(typeof s.maxLength === 'number' ? s.maxLength + 1 : 10_000),
  ];
  if (Array.isArray(s.enum)) out.push('not-a-known-value');
  if (s.format === 'uuid') out.push('not-a-uuid', '00000000-0000-0000-0000-00000000000g');
  return out;
}

function pathCases(op: Operation, base: Draft): Case[] {
  const cases: Case[] = [];
  for (const p of op.parameters.filter((p) => p.in === 'path')) {
    const set = (label: string, value: string, invalid?: boolean) => {
      const draft = edited(base, (d) => (d.params[p.name] = value));
      cases.push({
        label: `path ${p.name}: ${label}`,
        draft,
        ...(invalid === undefined ? {} : { invalid }),
      });
    };
    set('a random UUID', '3f1c2a9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b');
    for (const id of BAD_IDS) set(JSON.stringify(id), id);
    for (const length of [100, 1000, 10_000]) set(`${length} characters`, 'a'.repeat(length));
    for (const raw of BAD_PERCENT) {
      const draft = edited(base, (d) => (d.rawParams[p.name] = raw));
      cases.push({ label: `path ${p.name}: bad percent-encoding ${raw}`, draft, invalid: true });
    }
  }
  return cases;
}

function queryCases(op: Operation, base: Draft): Case[] {
  const cases: Case[] = [];
  const query = op.parameters.filter((p) => p.in === 'query');
  const replace = (d: Draft, name: string, value: string) => {
    d.query = [...d.query.filter(([k]) => k !== name), [name, value]];
  };
  for (const p of query) {
    for (const value of badQueryValues(p)) {
      const label = `query ${p.name}=${JSON.stringify(value.slice(0, 24))}${value.length > 24 ? '…' : ''}`;
      cases.push({
        label,
        draft: edited(base, (d) => {
          replace(d, p.name, value);
        }),
      });
    }
    const repeated = edited(base, (d) => d.query.push([p.name, '1'], [p.name, '2']));
    cases.push({ label: `query ${p.name} given twice`, draft: repeated });
    if (p.required) {
      const draft = edited(base, (d) => (d.query = d.query.filter(([k]) => k !== p.name)));
      cases.push({ label: `query ${p.name} missing`, draft, invalid: true });
    }
  }
  cases.push({
    label: 'unknown query parameter',
    draft: edited(base, (d) => d.query.push(['zz_unknown', '1'])),
  });
  for (const raw of BAD_PERCENT.slice(0, 2)) {
    const name = query[0]?.name ?? 'zz_unknown';
    cases.push({
      label: `query bad percent-encoding ${raw}`,
      draft: edited(base, (d) => (d.rawQuery = `${name}=${raw}`)),
      invalid: true,
    });
  }
  return cases;
}

const raw = (bytes: string | Buffer, type?: string): DraftBody => ({
  kind: 'raw',
  bytes: Buffer.from(bytes),
  ...(type === undefined ? {} : { type }),
});

/** Bodies that are not the JSON object an operation takes, whatever it takes. */
function badJsonBodies(valid: unknown): [string, DraftBody][] {
  const json = 'application/json';
  const validText = JSON.stringify(valid);
  return [
    ['no body', { kind: 'none' }],
    ['JSON null', raw('null', json)],
    ['JSON array', raw('[]', json)],
    ['JSON string', raw('"text"', json)],
    ['JSON number', raw('42', json)],
    ['malformed JSON', raw('{"a":', json)],
    ['single-quoted JSON', raw("{'a': 1}", json)],
    ['JSON with a byte-order mark', raw(`\uFEFF${validText}`, json)],
    ['JSON with a trailing comma', raw(validText.replace(/}$/, ',}'), json)],
    ['arrays nested 100,000 deep', raw('['.repeat(100_000) + ']'.repeat(100_000), json)],
    ['objects nested 50,000 deep', raw('{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000), json)],
    [
      'a body over 1 MiB',
      raw(JSON.stringify({ ...(valid as object), pad: 'x'.repeat(MIB + 64) }), json),
    ],
    ['text/plain', raw(validText, 'text/plain')],
    ['application/xml', raw('<a>1</a>', 'application/xml')],
    ['a urlencoded form', raw('a=1&b=2', 'application/x-www-form-urlencoded')],
    ['multipart without a boundary', raw(validText, 'multipart/form-data')],
    [
      'JSON in UTF-16',
      raw(Buffer.from(validText, 'utf16le'), 'application/json; charset=utf-16le'),
    ],
    ['a body without a content type', raw(validText)],
  ];
}

function jsonFieldCases(schema: Schema, base: Draft, rng: Rng): Case[] {
  const cases: Case[] = [];
  const value = base.body.kind === 'json' ? base.body.value : {};
  const object =
    value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  const set = (label: string, edit: (o: Record<string, unknown>) => void) => {
    const copy = structuredClone(object);
    edit(copy);
    cases.push({ label, draft: edited(base, (d) => (d.body = { kind: 'json', value: copy })) });
  };
  for (const name of requiredOf(schema))
    set(`body ${name} missing`, (o) => Reflect.deleteProperty(o, name));
  for (const [name, property] of Object.entries(props(schema))) {
    for (const wrong of wrongTypes(property))
      set(`body ${name}: ${JSON.stringify(wrong)}`, (o) => (o[name] = wrong));
    for (const big of oversize(property)) {
      const shown = typeof big === 'string' ? `${Array.from(big).length} characters` : String(big);
      set(`body ${name}: ${shown}`, (o) => (o[name] = big));
    }
    if (typeOf(property) === 'string') {
      const text = rng.pick(STRANGE_TEXT);
      set(`body ${name}: ${JSON.stringify(text)}`, (o) => (o[name] = text));
    }
  }
  set('body with an unknown field', (o) => (o.zz_unknown = true));
  // Written as text: a JavaScript object cannot carry these keys through JSON.stringify as sent.
  const text = JSON.stringify(object);
  const withKey = (entry: string) =>
    text.replace(/^\{/, text === '{}' ? `{${entry}` : `{${entry},`);
  const texts: [string, string][] = [
    ['body with __proto__', withKey('"__proto__":{"is_admin":true}')],
    ['body with constructor.prototype', withKey('"constructor":{"prototype":{"polluted":true}}')],
    ['body with a key given twice', withKey('"zz":1,"zz":2')],
    ['body with a lone surrogate escape', withKey('"zz":"\\ud800"')],
  ];
  for (const [label, json] of texts) {
    cases.push({
      label,
      draft: edited(base, (d) => (d.body = raw(json, 'application/json'))),
      invalid: true,
    });
  }
  return cases;
}

function formCases(schema: Schema, base: Draft): Case[] {
  const parts = base.body.kind === 'form' ? base.body.parts : [];
  const form = (label: string, body: DraftBody, invalid?: boolean): Case => ({
    label,
    draft: edited(base, (d) => (d.body = body)),
    ...(invalid === undefined ? {} : { invalid }),
  });
  const edit = (change: (p: FormPart[]) => FormPart[]) => ({
    kind: 'form' as const,
    parts: change(structuredClone(parts)),
  });
  const cases = requiredOf(schema).map((name) =>
    form(
      `form ${name} missing`,
      edit((p) => p.filter((x) => x.name !== name)),
      true,
    ),
  );
  const file = (value: string | Buffer) => (p: FormPart[]) =>
    p.map((x) => (x.filename === undefined ? x : { ...x, value }));
  cases.push(
    form(
      'form with an unknown field',
      edit((p) => [...p, { name: 'zz_unknown', value: '1' }]),
      true,
    ),
    form(
      'form field given twice',
      edit((p) => [...p, ...p.filter((x) => x.filename === undefined).slice(0, 1)]),
    ),
    form('form file of 6 binary bytes', edit(file(Buffer.from([0, 159, 146, 150, 0, 1])))),
    form('form file empty', edit(file(''))),
    form('form file that starts like a PDF', edit(file('%PDF-1.7\n\u0000garbage'))),
    form(
      'form title over 200 characters',
      edit((p) => p.map((x) => (x.name === 'title' ? { ...x, value: 't'.repeat(201) } : x))),
      true,
    ),
    form('form cut off before its end', { kind: 'form', parts, truncated: true }, true),
    form('form with another boundary', { kind: 'form', parts, boundary: 'not-the-one-used' }, true),
    form('JSON instead of a form', { kind: 'json', value: { title: 'x', category: 'y' } }, true),
    form('a body without a content type', raw('file=x'), true),
  );
  return cases;
}

/** Every mutation of a valid request that the operation's document entry calls for. */
export function mutations(op: Operation, base: Draft, rng: Rng): Case[] {
  const cases = [...pathCases(op, base), ...queryCases(op, base)];
  const json = op.body?.content.get('application/json');
  const form = op.body?.content.get('multipart/form-data');
  if (json !== undefined) {
    const value = base.body.kind === 'json' ? base.body.value : {};
    for (const [label, body] of badJsonBodies(value)) {
      // RFC 8259 lets a parser ignore a byte-order mark; a missing optional body is no fault.
      const tolerated =
        label === 'JSON with a byte-order mark' || (label === 'no body' && !op.body?.required);
      cases.push({ label, draft: edited(base, (d) => (d.body = body)), invalid: !tolerated });
    }
    cases.push(...jsonFieldCases(json, base, rng));
  } else if (form !== undefined) {
    cases.push(...formCases(form, base));
  } else if (WRITE_METHODS.has(op.method)) {
    cases.push(
      {
        label: 'an unexpected JSON body',
        draft: edited(base, (d) => (d.body = { kind: 'json', value: { zz: 1 } })),
        invalid: true,
      },
      {
        label: 'an unexpected text body',
        draft: edited(base, (d) => (d.body = raw('hello', 'text/plain'))),
        invalid: true,
      },
      {
        label: 'an unexpected body over 1 MiB',
        draft: edited(
          base,
          (d) => (d.body = raw(JSON.stringify({ pad: 'x'.repeat(MIB + 64) }), 'application/json')),
        ),
        invalid: true,
      },
      {
        // Many clients send `{}` with every POST: tolerated as no body (docs/api.md, Requests).
        label: 'an empty JSON object',
        draft: edited(base, (d) => (d.body = { kind: 'json', value: {} })),
        invalid: false,
      },
    );
  }
  return cases;
}
