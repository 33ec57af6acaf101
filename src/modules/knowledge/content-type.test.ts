import { describe, expect, it } from 'vitest';
import { ContentSniffer, sniffContentType } from './content-type.js';

/** Feeds `bytes` in pieces cut at the given offsets. */
function sniffInPieces(bytes: Uint8Array, cuts: number[]): ContentSniffer {
  const sniffer = new ContentSniffer();
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    sniffer.push(bytes.subarray(start, cut));
    start = cut;
  }
  return sniffer;
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');

describe('ContentSniffer', () => {
  it('recognises a PDF by its magic bytes, even when they arrive split', () => {
    const pdf = Buffer.concat([utf8('%PDF-1.7\n'), Buffer.from([0, 0xff, 0xfe, 0x80])]);
    expect(sniffContentType(pdf)).toBe('application/pdf');
    for (const cut of [1, 2, 3, 4, 5]) {
      expect(sniffInPieces(pdf, [cut]).finish()).toBe('application/pdf');
    }
    expect(sniffInPieces(pdf, [1, 2, 3, 4]).finish()).toBe('application/pdf');
  });

  it('ignores whatever follows the PDF magic (binary streams are normal in a PDF)', () => {
    const sniffer = new ContentSniffer();
    sniffer.push(utf8('%PDF-'));
    sniffer.push(Buffer.from([0, 0, 0xc3]));
    expect(sniffer.unsupported).toBe(false);
    expect(sniffer.finish()).toBe('application/pdf');
  });

  it('accepts valid UTF-8 text, with or without a BOM', () => {
    expect(sniffContentType(utf8('Hypertension: 140/90 mmHg, 5 µg, β-blocker.\n'))).toBe(
      'text/plain',
    );
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    expect(sniffContentType(Buffer.concat([bom, utf8('Résumé')]))).toBe('text/plain');
  });

  it('accepts text that merely starts like a PDF but is not one', () => {
    expect(sniffContentType(utf8('%PD'))).toBe('text/plain');
    expect(sniffContentType(utf8('%PDX is not a PDF'))).toBe('text/plain');
  });

  it('accepts a multi-byte character split across chunks at every position', () => {
    const text = utf8('dose 5 µg – 😀 ok'); // 2-, 3- and 4-byte characters
    for (let cut = 1; cut < text.length; cut++) {
      expect(sniffInPieces(text, [cut]).finish(), `cut at ${cut}`).toBe('text/plain');
    }
    const oneByteAtATime = Array.from({ length: text.length - 1 }, (_, i) => i + 1);
    expect(sniffInPieces(text, oneByteAtATime).finish()).toBe('text/plain');
  });

  it('rejects a NUL byte anywhere in text, including the last chunk', () => {
    expect(sniffContentType(Buffer.from([0x61, 0x00, 0x62]))).toBeNull();
    const sniffer = sniffInPieces(Buffer.concat([utf8('a'.repeat(100)), Buffer.from([0])]), [50]);
    expect(sniffer.finish()).toBeNull();
  });

  it('rejects Latin-1 and other invalid UTF-8', () => {
    expect(sniffContentType(Buffer.from('caf\xe9 au lait', 'latin1'))).toBeNull();
    expect(sniffContentType(Buffer.from([0x61, 0xc0, 0xaf]))).toBeNull(); // overlong encoding
    expect(sniffContentType(Buffer.from([0xed, 0xa0, 0x80]))).toBeNull(); // UTF-16 surrogate
  });

  it('rejects text that ends in the middle of a character', () => {
    const euro = utf8('€'); // e2 82 ac
    expect(sniffContentType(Buffer.concat([utf8('price '), euro.subarray(0, 2)]))).toBeNull();
  });

  it('reports unsupported content early, so the upload can stop reading', () => {
    const sniffer = new ContentSniffer();
    sniffer.push(Buffer.from([0x89, 0x50, 0x4e, 0x47])); // PNG magic: 0x89 is no UTF-8 lead byte
    expect(sniffer.unsupported).toBe(true);
    expect(sniffer.finish()).toBeNull();
  });

  it('is not unsupported while text is still valid', () => {
    const sniffer = new ContentSniffer();
    sniffer.push(utf8('plain words'));
    expect(sniffer.unsupported).toBe(false);
  });

  it('reports an empty upload separately', () => {
    expect(sniffContentType(new Uint8Array(0))).toBe('empty');
    const sniffer = new ContentSniffer();
    sniffer.push(new Uint8Array(0));
    expect(sniffer.finish()).toBe('empty');
  });

  it('refuses chunks after finish and keeps its verdict', () => {
    const sniffer = new ContentSniffer();
    sniffer.push(utf8('text'));
    expect(sniffer.finish()).toBe('text/plain');
    expect(sniffer.finish()).toBe('text/plain');
    expect(() => {
      sniffer.push(utf8('more'));
    }).toThrow();
  });
});
