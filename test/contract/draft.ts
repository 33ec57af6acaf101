import type { WireRequest } from './client.js';
import type { Operation } from './spec.js';

/** One part of a multipart/form-data body: a field, or a file when it has a file name. */
export interface FormPart {
  name: string;
  value: string | Buffer;
  filename?: string;
}

export type DraftBody =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'raw'; bytes: Buffer; type?: string }
  | { kind: 'form'; parts: FormPart[]; boundary?: string; truncated?: boolean };

/** A request before it is put on the wire: values decoded, so mutations can edit them. */
export interface Draft {
  /** Path parameter values, percent-encoded when sent. */
  params: Record<string, string>;
  /** Path parameter text sent exactly as given (bad percent-encoding). */
  rawParams: Record<string, string>;
  /** Query pairs in order (a name may repeat), percent-encoded when sent. */
  query: [string, string][];
  /** Query text appended exactly as given. */
  rawQuery: string;
  body: DraftBody;
}

/** A request the fuzzer sends, with what it is meant to probe. */
export interface Case {
  label: string;
  draft: Draft;
  /**
   * The document says this request is wrong (a value outside its schema, a field it does not
   * have, a body it cannot take): it must not succeed. Undefined: judged from the schemas.
   */
  invalid?: boolean;
}

export const FORM_BOUNDARY = 'contract-fuzz-7c2f0a';

export function formBytes(parts: FormPart[], boundary = FORM_BOUNDARY, truncated = false): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const file = part.filename === undefined ? '' : `; filename="${part.filename}"`;
    const type = part.filename === undefined ? '' : 'Content-Type: application/octet-stream\r\n';
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${file}\r\n${type}\r\n`,
      ),
      Buffer.from(part.value),
      Buffer.from('\r\n'),
    );
  }
  if (!truncated) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

/** The request line and body of a draft: the path template filled in, the query appended. */
export function toWire(op: Operation, draft: Draft, headers: Record<string, string>): WireRequest {
  let path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const raw = draft.rawParams[name];
    return raw ?? encodeURIComponent(draft.params[name] ?? '');
  });
  const pairs = draft.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  if (draft.rawQuery !== '') pairs.push(draft.rawQuery);
  if (pairs.length > 0) path += `?${pairs.join('&')}`;
  const out: Record<string, string> = { ...headers };
  const body = draft.body;
  switch (body.kind) {
    case 'none':
      return { method: op.method, path, headers: out };
    case 'json':
      out['content-type'] = 'application/json';
      return {
        method: op.method,
        path,
        headers: out,
        body: Buffer.from(JSON.stringify(body.value)),
      };
    case 'raw':
      if (body.type !== undefined) out['content-type'] = body.type;
      return { method: op.method, path, headers: out, body: body.bytes };
    case 'form': {
      const boundary = body.boundary ?? FORM_BOUNDARY;
      out['content-type'] = `multipart/form-data; boundary=${boundary}`;
      const bytes = formBytes(body.parts, FORM_BOUNDARY, body.truncated === true);
      return { method: op.method, path, headers: out, body: bytes };
    }
  }
}
