/**
 * Just enough of the PDF object syntax (ISO 32000-1, 7.2-7.3) to read the dictionaries of a
 * file's streams before pdf.js opens it: numbers, names, references, strings (for the encryption
 * dictionary), arrays and dictionaries; other keywords are skipped over. Works on raw bytes and
 * never throws: malformed input parses to null.
 */

export type PdfValue =
  | { kind: 'number'; value: number }
  | { kind: 'name'; value: string }
  | { kind: 'ref'; num: number }
  | { kind: 'array'; items: PdfValue[] }
  | { kind: 'dict'; entries: Map<string, PdfValue> }
  | { kind: 'string'; bytes: Uint8Array }
  | { kind: 'other'; keyword: string };

type Token =
  | { type: 'open' | 'close' | 'dictOpen' | 'dictClose' }
  | { type: 'name' | 'keyword'; text: string }
  | { type: 'string'; bytes: Uint8Array }
  | { type: 'number'; value: number };

const WHITESPACE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIMITERS = new Set(Array.from(Buffer.from('()<>[]{}/%', 'latin1')));
/** Deeper nesting than any real dictionary; bounds the recursion on hostile input. */
const MAX_DEPTH = 32;

const isRegular = (byte: number) => !WHITESPACE.has(byte) && !DELIMITERS.has(byte);
const ESCAPES = new Map([
  [0x6e, 0x0a],
  [0x72, 0x0d],
  [0x74, 0x09],
  [0x62, 0x08],
  [0x66, 0x0c],
  [0x28, 0x28],
  [0x29, 0x29],
  [0x5c, 0x5c],
]);

export class PdfReader {
  constructor(
    readonly bytes: Uint8Array,
    public pos: number,
  ) {}

  /** Skips white space and comments. */
  skipSpace(): void {
    const { bytes } = this;
    while (this.pos < bytes.length) {
      const byte = bytes[this.pos] ?? 0;
      if (byte === 0x25) {
        while (this.pos < bytes.length && bytes[this.pos] !== 0x0a && bytes[this.pos] !== 0x0d) {
          this.pos++;
        }
      } else if (WHITESPACE.has(byte)) this.pos++;
      else return;
    }
  }

  /** The value starting at `pos` (after white space), or null when there is none. */
  value(depth = 0): PdfValue | null {
    if (depth > MAX_DEPTH) return null;
    const token = this.token();
    if (token === null) return null;
    switch (token.type) {
      case 'number':
        return this.numberOrRef(token.value);
      case 'name':
        return { kind: 'name', value: token.text };
      case 'keyword':
        return { kind: 'other', keyword: token.text };
      case 'string':
        return { kind: 'string', bytes: token.bytes };
      case 'open':
        return this.array(depth);
      case 'dictOpen':
        return this.dict(depth);
      default:
        return null;
    }
  }

  /** Whether the next token is `keyword`; consumes it only then. */
  keyword(keyword: string): boolean {
    const start = this.pos;
    const token = this.token();
    if (token?.type === 'keyword' && token.text === keyword) return true;
    this.pos = start;
    return false;
  }

  private numberOrRef(value: number): PdfValue {
    const start = this.pos;
    const gen = this.token();
    if (gen?.type === 'number' && Number.isInteger(value) && this.keyword('R')) {
      return { kind: 'ref', num: value };
    }
    this.pos = start;
    return { kind: 'number', value };
  }

  private array(depth: number): PdfValue | null {
    const items: PdfValue[] = [];
    for (;;) {
      this.skipSpace();
      if (this.bytes[this.pos] === 0x5d) {
        this.pos++;
        return { kind: 'array', items };
      }
      const item = this.value(depth + 1);
      if (item === null) return null;
      items.push(item);
    }
  }

  private dict(depth: number): PdfValue | null {
    const entries = new Map<string, PdfValue>();
    for (;;) {
      const key = this.token();
      if (key?.type === 'dictClose') return { kind: 'dict', entries };
      if (key?.type !== 'name') return null;
      const value = this.value(depth + 1);
      if (value === null) return null;
      entries.set(key.text, value);
    }
  }

  private token(): Token | null {
    this.skipSpace();
    const { bytes } = this;
    const byte = bytes[this.pos];
    if (byte === undefined) return null;
    const next = bytes[this.pos + 1];
    if (byte === 0x3c && next === 0x3c) return this.advance(2, { type: 'dictOpen' });
    if (byte === 0x3e && next === 0x3e) return this.advance(2, { type: 'dictClose' });
    if (byte === 0x5b) return this.advance(1, { type: 'open' });
    if (byte === 0x5d) return this.advance(1, { type: 'close' });
    if (byte === 0x2f) return { type: 'name', text: this.name() };
    if (byte === 0x28) return this.literalString();
    if (byte === 0x3c) return this.hexString();
    if (byte === 0x7b || byte === 0x7d) return this.advance(1, { type: 'keyword', text: '' });
    if (!isRegular(byte)) return null; // a stray `)` or `>`
    const start = this.pos;
    while (this.pos < bytes.length && isRegular(bytes[this.pos] ?? 0)) this.pos++;
    const text = String.fromCharCode(...bytes.subarray(start, Math.min(this.pos, start + 64)));
    const number = Number(text);
    return /^[+-]?(\d+\.?\d*|\.\d+)$/.test(text) && Number.isFinite(number)
      ? { type: 'number', value: number }
      : { type: 'keyword', text };
  }

  private advance(n: number, token: Token): Token {
    this.pos += n;
    return token;
  }

  /** A name after its `/`, with #xx escapes decoded. */
  private name(): string {
    const { bytes } = this;
    const start = ++this.pos;
    while (this.pos < bytes.length && isRegular(bytes[this.pos] ?? 0)) this.pos++;
    const raw = String.fromCharCode(...bytes.subarray(start, Math.min(this.pos, start + 256)));
    return raw.replace(/#([0-9A-Fa-f]{2})/g, (_, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    );
  }

  /** A literal string: balanced parentheses, backslash escapes (7.3.4.2). */
  private literalString(): Token | null {
    const { bytes } = this;
    const out: number[] = [];
    let depth = 0;
    while (this.pos < bytes.length) {
      const byte = bytes[this.pos++] ?? 0;
      if (byte === 0x5c) {
        this.escape(out);
        continue;
      }
      if (byte === 0x28) depth++;
      else if (byte === 0x29 && --depth === 0)
        return { type: 'string', bytes: Uint8Array.from(out) };
      if (depth > 0 && (byte !== 0x28 || depth > 1)) out.push(byte);
    }
    return null;
  }

  /** The escape after a backslash: \n \r \t \b \f \( \) \\, \ddd, or a line continuation. */
  private escape(out: number[]): void {
    const { bytes } = this;
    const next = bytes[this.pos++] ?? 0;
    const simple = ESCAPES.get(next);
    if (simple !== undefined) out.push(simple);
    else if (next >= 0x30 && next <= 0x37) {
      let value = next - 0x30;
      for (
        let k = 0;
        k < 2 && (bytes[this.pos] ?? 0) >= 0x30 && (bytes[this.pos] ?? 0) <= 0x37;
        k++
      ) {
        value = value * 8 + (bytes[this.pos++] ?? 0) - 0x30;
      }
      out.push(value & 0xff);
    } else if (next === 0x0d) {
      if (bytes[this.pos] === 0x0a) this.pos++;
    } else if (next !== 0x0a) out.push(next);
  }

  private hexString(): Token | null {
    const end = this.bytes.indexOf(0x3e, this.pos);
    if (end < 0) return null;
    const digits = Buffer.from(this.bytes.subarray(this.pos + 1, end))
      .toString('latin1')
      .replace(/[^0-9A-Fa-f]/g, '');
    this.pos = end + 1;
    return { type: 'string', bytes: Buffer.from(digits.length % 2 ? `${digits}0` : digits, 'hex') };
  }
}

/** The value at `pos`, or null. */
export function parseValueAt(bytes: Uint8Array, pos: number): PdfValue | null {
  return new PdfReader(bytes, pos).value();
}
