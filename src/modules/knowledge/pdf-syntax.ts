/**
 * Just enough of the PDF object syntax (ISO 32000-1, 7.2-7.3) to read the dictionaries of a
 * file's streams before pdf.js opens it: numbers, names, references, arrays and dictionaries;
 * strings and other keywords are skipped over. Works on raw bytes and never throws: malformed
 * input parses to null.
 */

export type PdfValue =
  | { kind: 'number'; value: number }
  | { kind: 'name'; value: string }
  | { kind: 'ref'; num: number }
  | { kind: 'array'; items: PdfValue[] }
  | { kind: 'dict'; entries: Map<string, PdfValue> }
  | { kind: 'other'; keyword: string };

type Token =
  | { type: 'open' | 'close' | 'dictOpen' | 'dictClose' }
  | { type: 'name' | 'keyword'; text: string }
  | { type: 'number'; value: number };

const WHITESPACE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIMITERS = new Set(Array.from(Buffer.from('()<>[]{}/%', 'latin1')));
/** Deeper nesting than any real dictionary; bounds the recursion on hostile input. */
const MAX_DEPTH = 32;

const isRegular = (byte: number) => !WHITESPACE.has(byte) && !DELIMITERS.has(byte);

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
    if (byte === 0x28) return this.skipString();
    if (byte === 0x3c) return this.skipHexString();
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

  /** A literal string: balanced parentheses, backslash escapes. */
  private skipString(): Token | null {
    const { bytes } = this;
    let depth = 0;
    while (this.pos < bytes.length) {
      const byte = bytes[this.pos++];
      if (byte === 0x5c) this.pos++;
      else if (byte === 0x28) depth++;
      else if (byte === 0x29 && --depth === 0) return { type: 'keyword', text: '' };
    }
    return null;
  }

  private skipHexString(): Token | null {
    const end = this.bytes.indexOf(0x3e, this.pos);
    if (end < 0) return null;
    this.pos = end + 1;
    return { type: 'keyword', text: '' };
  }
}

/** The value at `pos`, or null. */
export function parseValueAt(bytes: Uint8Array, pos: number): PdfValue | null {
  return new PdfReader(bytes, pos).value();
}
