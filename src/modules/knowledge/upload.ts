import { createHash, randomUUID } from 'node:crypto';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { AppError, validationError, type FieldError } from '../../errors.js';
import { FileStoreError, type FileStore } from '../../platform/file-store.js';
import { guardBodySize, type BodyGuard } from '../../platform/http/body-limit.js';
import { ContentSniffer } from './content-type.js';
import { DOC_KEY_PATTERN } from './schema.js';
import type { StoredUpload } from './service.js';

/** DECISIONS 6 / spec section 8. */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;
/** The whole form: the file, and the fields (3 × 4 KiB) with part headers and boundaries. */
export const MAX_FORM_BYTES = MAX_UPLOAD_BYTES + 64 * 1024;

/** C0 and C1 control characters (and DEL): never part of a title, category or file name. */
const isControl = (ch: string) => {
  const code = ch.codePointAt(0) ?? 0;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
};
/** The text without control characters (iterating code points, so surrogate pairs stay whole). */
function withoutControls(text: string): string {
  let out = '';
  for (const ch of text) if (!isControl(ch)) out += ch;
  return out;
}
const visibleLine = (text: string) => /\S/.test(text) && withoutControls(text) === text;
const FIELDS = {
  title: { max: 200, valid: visibleLine },
  category: { max: 100, valid: visibleLine },
  doc_key: { max: 128, valid: (text: string) => new RegExp(DOC_KEY_PATTERN).test(text) },
} as const;
type FieldName = keyof typeof FIELDS;

/**
 * Ends the exchange (DECISIONS 6: the server stops reading): `connection: close` on the error tells
 * the error handler to answer at once rather than drain the rest of the body (drain.ts).
 */
const tooLarge = () =>
  new AppError(
    'PAYLOAD_TOO_LARGE',
    `The file is larger than ${String(MAX_UPLOAD_BYTES / 1024 / 1024)} MB`,
    null,
    { connection: 'close' },
  );

/**
 * Reads a multipart upload (`file`, `title`, `category`, optional `doc_key`) and streams the file
 * into the store while hashing, measuring and sniffing it: the file is never held in memory, a file
 * over the limit or of an unsupported type stops the reading, and a rejected file is removed.
 */
export async function receiveUpload(
  request: FastifyRequest,
  files: FileStore,
): Promise<StoredUpload> {
  if (!request.isMultipart()) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the document as multipart/form-data');
  }
  // An announced size over the limit is refused before a byte of the body is read.
  if (Number(request.headers['content-length']) > MAX_FORM_BYTES) throw tooLarge();
  const fields: Partial<Record<FieldName, string>> = {};
  let stored: Omit<StoredUpload, 'title' | 'category' | 'docKey'> | null = null;
  let guard: BodyGuard | undefined;
  try {
    const parts = request.parts({
      limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 3, fieldSize: 4096, parts: 4 },
    });
    // Counts every byte of the body, whatever the parser keeps or skips (fields past their size,
    // text around the parts), and fails the parsing at the limit. Set up in the same turn as the
    // loop below starts the parser, so both see the body from its first byte.
    guard = guardBodySize(request.raw, MAX_FORM_BYTES, tooLarge);
    for await (const part of parts) {
      if (part.type === 'field') {
        const name = fieldName(part.fieldname);
        if (fields[name] !== undefined) throw validationError(`body.${name}`, 'is given twice');
        fields[name] = fieldValue(name, part.value);
      } else {
        if (part.fieldname !== 'file') throw notAllowed(part.fieldname);
        stored = await storeFile(part, files);
      }
    }
    return complete(fields, stored);
  } catch (err) {
    if (stored !== null) await files.delete(stored.storageKey);
    throw translate(err);
  } finally {
    guard?.dispose();
  }
}

async function storeFile(part: MultipartFile, files: FileStore) {
  const documentId = randomUUID();
  const storageKey = `kb/${documentId}/original`;
  const hash = createHash('sha256');
  const sniffer = new ContentSniffer();
  let size = 0;
  // At the limit the parser stops passing the file on but keeps reading the part to its end: the
  // upload is refused here and then, so the rest is never read (DECISIONS 6).
  part.file.once('limit', () => part.file.destroy(tooLarge()));
  async function* tap() {
    for await (const chunk of part.file as AsyncIterable<Buffer>) {
      sniffer.push(chunk);
      if (sniffer.unsupported) throw unsupported();
      hash.update(chunk);
      size += chunk.length;
      yield chunk;
    }
    if (part.file.truncated) throw tooLarge();
  }
  await files.put(storageKey, tap());
  const type = sniffer.finish();
  if (type === null || type === 'empty') {
    await files.delete(storageKey);
    throw type === null ? unsupported() : validationError('body.file', 'is empty');
  }
  return {
    documentId,
    storageKey,
    filename: safeName(part.filename),
    contentType: type,
    sizeBytes: size,
    contentHash: hash.digest('hex'),
  };
}

function complete(
  fields: Partial<Record<FieldName, string>>,
  stored: Omit<StoredUpload, 'title' | 'category' | 'docKey'> | null,
): StoredUpload {
  const missing: FieldError[] = [
    ...(stored === null ? [{ field: 'body.file', message: 'is required' }] : []),
    ...(['title', 'category'] as const)
      .filter((name) => fields[name] === undefined)
      .map((name) => ({ field: `body.${name}`, message: 'is required' })),
  ];
  if (missing.length > 0 || stored === null) {
    throw new AppError('VALIDATION_ERROR', 'Request validation failed', missing);
  }
  const title = fields.title ?? '';
  const docKey = fields.doc_key ?? slug(title);
  if (docKey === '')
    throw validationError('body.doc_key', 'is required when the title has no letters or digits');
  return { ...stored, title, category: fields.category ?? '', docKey };
}

function fieldName(name: string): FieldName {
  if (Object.hasOwn(FIELDS, name)) return name as FieldName;
  throw notAllowed(name);
}

/** Names the client's field only when it is a plain name: it is echoed in the answer. */
const notAllowed = (name: string) =>
  /^[A-Za-z0-9_]{1,64}$/.test(name)
    ? validationError(`body.${name}`, 'is not an allowed field')
    : validationError('body', 'has a field that is not allowed');

function fieldValue(name: string, value: unknown): string {
  const rule = FIELDS[fieldName(name)];
  const text = typeof value === 'string' ? value.trim() : '';
  if (text.length === 0 || text.length > rule.max || !rule.valid(text)) {
    throw validationError(
      `body.${name}`,
      `must be 1 to ${String(rule.max)} visible characters${name === 'doc_key' ? ' (a-z, 0-9, ".", "_", "-")' : ''}`,
    );
  }
  return text;
}

/** A doc_key from a title: lower-case ASCII words joined by hyphens. */
export function slug(title: string): string {
  return title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 128)
    .replace(/-+$/, '');
}

/** The client's file name, kept for display only: no path, no control characters, bounded. */
function safeName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const clean = withoutControls(base).trim().slice(0, 255);
  return clean === '' ? 'upload' : clean;
}

/** The error handler drains a small rest of the body or closes the connection (drain.ts). */
const unsupported = () =>
  new AppError('UNSUPPORTED_MEDIA_TYPE', 'Only PDF and UTF-8 text files can be uploaded');

/**
 * Multipart limits surface as the plugin's errors and a malformed body as the parser's plain
 * errors; they become the envelope's codes. The file store's own failures stay server errors.
 */
function translate(err: unknown): unknown {
  if (err instanceof AppError || err instanceof FileStoreError) return err;
  const code = (err as { code?: unknown }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge();
  if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
    return validationError('body', 'takes one file and the fields title, category and doc_key');
  }
  return validationError('body', 'is not valid multipart/form-data');
}
