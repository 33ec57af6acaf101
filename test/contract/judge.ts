import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Case } from './draft.js';
import type { Operation, Schema } from './spec.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * Whether the document itself says a request is wrong, so that its success is a defect. Path and
 * query values arrive as text and are read as the declared types (OpenAPI's `form` style); a
 * query parameter the document does not list is not judged (OpenAPI does not forbid it).
 */
export class RequestJudge {
  private readonly strict = new Ajv2020({ strict: false, validateFormats: true });
  private readonly coercing = new Ajv2020({
    strict: false,
    validateFormats: true,
    coerceTypes: true,
  });

  constructor() {
    addFormats(this.strict);
    addFormats(this.coercing);
  }

  invalid(op: Operation, c: Case): boolean {
    if (c.invalid !== undefined) return c.invalid;
    const draft = c.draft;
    if (Object.keys(draft.rawParams).length > 0 || draft.rawQuery !== '') return true;
    for (const p of op.parameters.filter((p) => p.in === 'path')) {
      if (!this.coercing.validate(p.schema, draft.params[p.name])) return true;
    }
    if (this.queryInvalid(op, draft.query)) return true;
    const body = draft.body;
    if (body.kind === 'none') return op.body?.required === true;
    if (body.kind !== 'json') return false;
    const schema: Schema | undefined = op.body?.content.get('application/json');
    return schema === undefined || !this.strict.validate(schema, body.value);
  }

  private queryInvalid(op: Operation, pairs: [string, string][]): boolean {
    const values = new Map<string, string[]>();
    for (const [k, v] of pairs) values.set(k, [...(values.get(k) ?? []), v]);
    for (const p of op.parameters.filter((p) => p.in === 'query')) {
      const given = values.get(p.name);
      if (given === undefined) {
        if (p.required) return true;
        continue;
      }
      const value = given.length === 1 ? given[0] : given;
      if (!this.coercing.validate(p.schema, value)) return true;
    }
    return false;
  }
}
