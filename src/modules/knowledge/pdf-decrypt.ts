import { createCipheriv, createDecipheriv, createHash } from 'node:crypto';
import type { PdfValue } from './pdf-syntax.js';

/**
 * The standard security handler (ISO 32000-2, 7.6.4), as far as pdf.js goes without a password:
 * a file encrypted with an empty user password opens in pdf.js, which decrypts and then decodes
 * its streams, so the decoded-size budget has to see through the encryption too. RC4 (V1, V2 and
 * V4 with V2), AES-128 (AESV2) and AES-256 (AESV3: revisions 5 and 6). A file that needs a password
 * never gets past pdf.js's PasswordException, so none of its streams is decoded.
 */

export type Security =
  | { kind: 'open'; decrypt: (num: number, gen: number, data: Uint8Array) => Uint8Array }
  /** A user password is needed (pdf.js refuses the file), or the handler is not the standard one. */
  | { kind: 'closed' };

type Lookup = (value: PdfValue | undefined) => PdfValue | undefined;

/** The padding string of Algorithm 2, which an empty password becomes. */
const PASSWORD_PADDING = Buffer.from(
  '28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a',
  'hex',
);

const bytesOf = (value: PdfValue | undefined): Buffer =>
  value?.kind === 'string' ? Buffer.from(value.bytes) : Buffer.alloc(0);
const numberOf = (value: PdfValue | undefined, fallback: number): number =>
  value?.kind === 'number' ? value.value : fallback;
const nameOf = (value: PdfValue | undefined): string | undefined =>
  value?.kind === 'name' ? value.value : undefined;

/** The handler of an Encrypt dictionary, with the file's first ID, for the empty password. */
export function securityOf(
  encrypt: Map<string, PdfValue>,
  fileId: Uint8Array,
  lookup: Lookup,
): Security {
  const get = (key: string) => lookup(encrypt.get(key));
  const v = numberOf(get('V'), 0);
  if (nameOf(get('Filter')) !== 'Standard' || ![1, 2, 4, 5].includes(v)) return { kind: 'closed' };
  const method = v < 4 ? 'V2' : cryptMethod(get('CF'), nameOf(get('StmF')), lookup);
  if (method === 'None') return { kind: 'open', decrypt: (_n, _g, data) => data };
  const key = v === 5 ? keyR5R6(get) : keyR2R4(get, v, method, Buffer.from(fileId), lookup);
  if (key === null) return { kind: 'closed' };
  return { kind: 'open', decrypt: (num, gen, data) => decryptStream(method, key, num, gen, data) };
}

type Method = 'V2' | 'AESV2' | 'AESV3' | 'None';

function cryptMethod(cf: PdfValue | undefined, stmf: string | undefined, lookup: Lookup): Method {
  if (cf?.kind !== 'dict' || stmf === undefined || stmf === 'Identity') return 'None';
  const filter = lookup(cf.entries.get(stmf));
  const cfm = filter?.kind === 'dict' ? nameOf(lookup(filter.entries.get('CFM'))) : undefined;
  return cfm === 'V2' || cfm === 'AESV2' || cfm === 'AESV3' ? cfm : 'None';
}

/** Algorithm 2 with the empty password, checked against U (Algorithms 4 and 5); null if wrong. */
function keyR2R4(
  get: (key: string) => PdfValue | undefined,
  v: number,
  method: Method,
  fileId: Buffer,
  lookup: Lookup,
): Buffer | null {
  const revision = numberOf(get('R'), 2);
  const bits = numberOf(get('Length'), 0) || keyBitsOfFilter(get, lookup) || 40;
  const length = (bits < 40 ? bits * 8 : bits) / 8;
  const p = Buffer.alloc(4);
  p.writeInt32LE(numberOf(get('P'), 0) | 0);
  // As pdf.js reads it: metadata counts as encrypted unless V4/V5 say `/EncryptMetadata false`.
  const flag = get('EncryptMetadata');
  const encryptMetadata =
    (v === 4 || v === 5) && !(flag?.kind === 'other' && flag.keyword === 'false');
  const parts = [PASSWORD_PADDING, bytesOf(get('O')).subarray(0, 32), p, fileId];
  if (revision >= 4 && !encryptMetadata) parts.push(Buffer.alloc(4, 0xff));
  let hash = md5(Buffer.concat(parts));
  if (revision >= 3) for (let i = 0; i < 50; i++) hash = md5(hash.subarray(0, length));
  const key = hash.subarray(0, length);
  const u = bytesOf(get('U'));
  const check = revision >= 3 ? userCheckR3(key, fileId) : rc4(key, PASSWORD_PADDING);
  if (!check.equals(u.subarray(0, check.length))) return null;
  // pdf.js pads a short AES key to 16 bytes.
  return method === 'AESV2' && key.length < 16
    ? Buffer.concat([key, Buffer.alloc(16 - key.length)])
    : key;
}

function keyBitsOfFilter(get: (key: string) => PdfValue | undefined, lookup: Lookup): number {
  const cf = get('CF');
  const stmf = nameOf(get('StmF'));
  if (cf?.kind !== 'dict' || stmf === undefined) return 0;
  const filter = lookup(cf.entries.get(stmf));
  return filter?.kind === 'dict' ? numberOf(lookup(filter.entries.get('Length')), 128) : 0;
}

function userCheckR3(key: Buffer, fileId: Buffer): Buffer {
  let data = rc4(key, md5(Buffer.concat([PASSWORD_PADDING, fileId])));
  for (let i = 1; i <= 19; i++)
    data = rc4(
      key.map((b) => b ^ i),
      data,
    );
  return data;
}

/** Revisions 5 and 6 with the empty password: checked against U, the key out of UE. */
function keyR5R6(get: (key: string) => PdfValue | undefined): Buffer | null {
  const revision = numberOf(get('R'), 5);
  const u = bytesOf(get('U'));
  const hash = (input: Buffer) => (revision === 6 ? hash2B(input, Buffer.alloc(0)) : sha256(input));
  if (!hash(u.subarray(32, 40)).equals(u.subarray(0, 32))) return null;
  const decipher = createDecipheriv('aes-256-cbc', hash(u.subarray(40, 48)), Buffer.alloc(16));
  decipher.setAutoPadding(false);
  const ue = bytesOf(get('UE')).subarray(0, 32);
  if (ue.length !== 32) return null;
  return Buffer.concat([decipher.update(ue), decipher.final()]);
}

/** Algorithm 2.B (revision 6) of the empty password with `salt`; `udata` is U for the owner. */
export function hash2B(salt: Buffer, udata: Buffer): Buffer {
  let k = sha256(Buffer.concat([salt, udata]));
  let e = Buffer.from([0]);
  for (let i = 0; i < 64 || (e.at(-1) ?? 0) > i - 32; i++) {
    const block = Buffer.concat([k, udata]); // k is 32, 48 or 64 bytes, all of it
    const cipher = createCipheriv('aes-128-cbc', k.subarray(0, 16), k.subarray(16, 32));
    cipher.setAutoPadding(false);
    e = Buffer.concat([
      cipher.update(Buffer.concat(Array<Buffer>(64).fill(block))),
      cipher.final(),
    ]);
    const sum = e.subarray(0, 16).reduce((a, b) => a + b, 0);
    k = createHash(['sha256', 'sha384', 'sha512'][sum % 3] ?? 'sha256')
      .update(e)
      .digest();
  }
  return k.subarray(0, 32);
}

function decryptStream(method: Method, key: Buffer, num: number, gen: number, data: Uint8Array) {
  if (method === 'V2') return rc4(objectKey(key, num, gen, false), data);
  if (data.length < 32) return new Uint8Array(0);
  const aesKey = method === 'AESV3' ? key : objectKey(key, num, gen, true);
  const decipher = createDecipheriv(
    method === 'AESV3' ? 'aes-256-cbc' : 'aes-128-cbc',
    aesKey,
    data.subarray(0, 16),
  );
  decipher.setAutoPadding(false); // a wrong padding is pdf.js's to forgive, not a reason to stop
  const body = data.subarray(16, 16 + Math.floor((data.length - 16) / 16) * 16);
  return withoutPadding(Buffer.concat([decipher.update(body), decipher.final()]));
}

/** PKCS #7 padding removed when it is valid, kept (as pdf.js keeps it) when it is not. */
function withoutPadding(plain: Buffer): Buffer {
  const n = plain.at(-1) ?? 0;
  if (n < 1 || n > 16 || n > plain.length) return plain;
  return plain.subarray(plain.length - n).every((b) => b === n) ? plain.subarray(0, -n) : plain;
}

/** Algorithm 1: the key of one object. */
function objectKey(key: Buffer, num: number, gen: number, aes: boolean): Buffer {
  const suffix = [num & 0xff, (num >> 8) & 0xff, (num >> 16) & 0xff, gen & 0xff, (gen >> 8) & 0xff];
  const salt = aes ? Buffer.from('sAlT', 'latin1') : Buffer.alloc(0);
  return md5(Buffer.concat([key, Buffer.from(suffix), salt])).subarray(
    0,
    Math.min(key.length + 5, 16),
  );
}

/** RC4 (not in OpenSSL 3's default provider, and a few lines). */
export function rc4(key: Uint8Array, data: Uint8Array): Buffer {
  const s = Uint8Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + (s[i] ?? 0) + (key[i % key.length] ?? 0)) & 0xff;
    [s[i], s[j]] = [s[j] ?? 0, s[i] ?? 0];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 0xff;
    j = (j + (s[i] ?? 0)) & 0xff;
    [s[i], s[j]] = [s[j] ?? 0, s[i] ?? 0];
    out[n] = (data[n] ?? 0) ^ (s[((s[i] ?? 0) + (s[j] ?? 0)) & 0xff] ?? 0);
  }
  return out;
}

const md5 = (data: Uint8Array) => createHash('md5').update(data).digest();
const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest();
