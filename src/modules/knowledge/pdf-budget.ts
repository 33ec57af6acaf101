import { securityOf, type Security } from './pdf-decrypt.js';
import { DECODERS, decodeFlate, decodeLzw, type Decoder, type Sink } from './pdf-filters.js';
import { PdfReader, parseValueAt, type PdfValue } from './pdf-syntax.js';

/**
 * The decoded-size budget (DECISIONS 6: 200 MB of decoded PDF stream data a job), measured before
 * pdf.js sees the file. pdf.js keeps every stream it decodes whole in memory, so a 3 MB content
 * stream that inflates to 3 GB took the process to 6.5 GB; here every stream of the file is run
 * through its filters into a counter, which stops the moment the sum passes the budget.
 *
 * Every `N G obj` in the file is read, not only those the cross-reference table lists: an object
 * hidden inside another stream's data is counted too (pdf.js would find it by its offset). Objects
 * of object streams are not streams (ISO 32000-1, 7.5.7), so no stream hides there; a filter
 * given by a reference that cannot be resolved is tried as Flate and as LZW, the worse counted.
 * An encrypted file that pdf.js opens without a password is decrypted first (pdf-decrypt.ts); one
 * that needs a password is counted as stored, since pdf.js decodes none of it.
 */

export interface DecodedSize {
  /** Decoded bytes counted, at most just over the budget. */
  bytes: number;
  /** `decrypted`: encrypted, opened with the empty password; `closed`: counted as stored. */
  encryption: 'none' | 'decrypted' | 'closed';
}

/** Thrown as soon as the sum passes the budget. */
export class DecodedSizeExceeded extends Error {
  constructor() {
    super('decoded stream data exceeds the budget');
    this.name = 'DecodedSizeExceeded';
  }
}

const OBJECT_HEADER = /(\d{1,10})\s+(\d{1,5})\s+obj\b/g;

interface Located {
  num: number;
  gen: number;
  dict: Map<string, PdfValue>;
  data: Uint8Array;
}

export async function measureDecodedSize(pdf: Uint8Array, budget: number): Promise<DecodedSize> {
  const text = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength).toString('latin1');
  const offsets = new Map<number, number>(); // object number -> its last definition
  const headers: { num: number; gen: number; at: number }[] = [];
  for (const m of text.matchAll(OBJECT_HEADER)) {
    const at = m.index + m[0].length;
    offsets.set(Number(m[1]), at);
    headers.push({ num: Number(m[1]), gen: Number(m[2]), at });
  }
  const security = encryptionOf(pdf, text, offsets);
  const counter = new Counter(budget);
  for (const header of headers) {
    const stream = streamAt(pdf, text, header, offsets);
    if (stream === null) continue;
    if (security?.kind === 'closed') counter.add(stream.data.length);
    else await count(decrypted(stream, security), offsets, pdf, counter);
  }
  const encryption = security === null ? 'none' : security.kind === 'open' ? 'decrypted' : 'closed';
  return { bytes: counter.total, encryption };
}

/** The file's security handler (its last Encrypt entry), or null when it is not encrypted. */
function encryptionOf(
  pdf: Uint8Array,
  text: string,
  offsets: Map<number, number>,
): Security | null {
  const lookup = (value: PdfValue | undefined) => resolve(value, offsets, pdf);
  const last = (pattern: RegExp) => [...text.matchAll(pattern)].map((m) => m.index + m[0].length);
  const dicts = last(/\/Encrypt\b/g)
    .map((at) => lookup(parseValueAt(pdf, at) ?? undefined))
    .filter((v) => v?.kind === 'dict');
  const encrypt = dicts.at(-1);
  if (encrypt?.kind !== 'dict') return null;
  const ids = last(/\/ID\b/g).map((at) => parseValueAt(pdf, at));
  const id = ids.at(-1);
  const first = id?.kind === 'array' ? id.items[0] : undefined;
  return securityOf(
    encrypt.entries,
    first?.kind === 'string' ? first.bytes : new Uint8Array(0),
    lookup,
  );
}

/** The stream's data as pdf.js decodes it: decrypted, except cross-reference streams (never encrypted). */
function decrypted(stream: Located, security: Security | null): Located {
  if (security?.kind !== 'open') return stream;
  const type = stream.dict.get('Type');
  if (type?.kind === 'name' && type.value === 'XRef') return stream;
  return { ...stream, data: security.decrypt(stream.num, stream.gen, stream.data) };
}

/** Adds up decoded bytes across streams; throws past the budget. */
class Counter {
  total = 0;
  constructor(readonly budget: number) {}
  add(n: number): void {
    this.total += n;
    if (this.total > this.budget) throw new DecodedSizeExceeded();
  }
  get left(): number {
    return this.budget - this.total;
  }
}

/** The stream whose object body starts at `at`, or null when that object is not a stream. */
function streamAt(
  pdf: Uint8Array,
  text: string,
  header: { num: number; gen: number; at: number },
  offsets: Map<number, number>,
): Located | null {
  const reader = new PdfReader(pdf, header.at);
  const value = reader.value();
  if (value?.kind !== 'dict' || !reader.keyword('stream')) return null;
  let start = reader.pos;
  if (pdf[start] === 0x0d) start++;
  if (pdf[start] === 0x0a) start++;
  const declared = resolve(value.entries.get('Length'), offsets, pdf);
  let end = -1;
  if (declared?.kind === 'number' && Number.isInteger(declared.value) && declared.value >= 0) {
    const candidate = start + declared.value;
    if (/^\s*endstream/.test(text.slice(candidate, candidate + 32))) end = candidate;
  }
  // A wrong or indirect length: pdf.js too looks for `endstream` instead.
  if (end < 0) end = text.indexOf('endstream', start);
  if (end < 0) end = pdf.length;
  return { num: header.num, gen: header.gen, dict: value.entries, data: pdf.subarray(start, end) };
}

function resolve(
  value: PdfValue | undefined,
  offsets: Map<number, number>,
  pdf: Uint8Array,
): PdfValue | undefined {
  if (value?.kind !== 'ref') return value;
  const at = offsets.get(value.num);
  return at === undefined ? undefined : (parseValueAt(pdf, at) ?? undefined);
}

/** The filter names, or null when they cannot be told (a reference not found). */
function filtersOf(
  dict: Map<string, PdfValue>,
  offsets: Map<number, number>,
  pdf: Uint8Array,
): string[] | null {
  const raw = dict.get('Filter');
  if (raw === undefined) return [];
  const value = resolve(raw, offsets, pdf);
  if (value === undefined) return null;
  const names: string[] = [];
  for (const item of value.kind === 'array' ? value.items : [value]) {
    const name = resolve(item, offsets, pdf);
    if (name?.kind !== 'name') return null;
    names.push(name.value);
  }
  return names;
}

async function count(
  stream: Located,
  offsets: Map<number, number>,
  pdf: Uint8Array,
  counter: Counter,
): Promise<void> {
  const filters = filtersOf(stream.dict, offsets, pdf);
  if (filters === null) {
    // Unknown filters: whatever pdf.js could make of the data, count the largest.
    const sizes = await Promise.all(
      [decodeFlate, decodeLzw].map((decoder) => sizeThrough(decoder, stream.data, counter.left)),
    );
    counter.add(Math.max(stream.data.length, ...sizes));
    return;
  }
  let data = stream.data;
  for (const [i, name] of filters.entries()) {
    const decoder = DECODERS.get(name);
    if (decoder === undefined) break; // an image codec or Crypt: not decoded for text
    if (i === filters.length - 1) {
      counter.add(await sizeThrough(decoder, data, counter.left));
      return;
    }
    data = await decodeWithin(decoder, data, counter.left);
  }
  counter.add(data.length);
}

/** How many bytes `decoder` makes of `data`, counting no further than just past `limit`. */
async function sizeThrough(decoder: Decoder, data: Uint8Array, limit: number): Promise<number> {
  let total = 0;
  const sink: Sink = {
    write(chunk) {
      total += chunk.length;
      return total <= limit;
    },
  };
  await decoder(data, sink);
  return total;
}

/** The decoded bytes themselves (for the next filter of a chain), never more than `limit` + 1. */
async function decodeWithin(decoder: Decoder, data: Uint8Array, limit: number) {
  const parts: Uint8Array[] = [];
  let total = 0;
  const sink: Sink = {
    write(chunk) {
      parts.push(chunk.slice(0, Math.max(0, limit + 1 - total)));
      total += chunk.length;
      return total <= limit;
    },
  };
  await decoder(data, sink);
  if (total > limit) throw new DecodedSizeExceeded();
  return Buffer.concat(parts);
}
