import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  encryptedBombPdf,
  inflationBombPdf,
  writePdf,
  type PdfObject,
} from '../../../test/helpers/hostile-pdf.js';
import { pdfFromPages, sampleParagraph } from '../../../test/helpers/pdf.js';
import { DecodedSizeExceeded, measureDecodedSize } from './pdf-budget.js';
import { extractPages } from './extract.js';
import { DECODERS } from './pdf-filters.js';

const MiB = 1024 * 1024;
const CATALOG: PdfObject[] = [
  { dict: '/Type /Catalog /Pages 2 0 R' },
  { dict: '/Type /Pages /Kids [] /Count 0' },
];

/** Deterministic bytes that compress, but not to nothing. */
const sample = (n: number) =>
  Buffer.from(Array.from({ length: n }, (_, i) => (i * i + 7 * i) % 251));

/** A plain LZW encoder (9-12 bit codes, EarlyChange 1), to check the decoder against. */
function lzwEncode(data: Uint8Array): Buffer {
  const table = new Map<string, number>();
  for (let i = 0; i < 256; i++) table.set(String.fromCharCode(i), i);
  let [next, width, decoderNext, emitted, bits, value] = [258, 9, 258, 0, 0, 0];
  const out: number[] = [];
  const emit = (code: number) => {
    [value, bits] = [(value << width) | code, bits + width];
    while (bits >= 8) [out[out.length], bits] = [(value >> (bits - 8)) & 0xff, bits - 8];
    value &= (1 << bits) - 1;
    // The width follows the decoder's table, which lags the encoder's by one entry.
    if (emitted++ > 0 && decoderNext < 4096) decoderNext++;
    if (decoderNext + 1 >= 1 << width && width < 12) width++;
  };
  emit(256);
  emitted = 0;
  let w = '';
  for (const byte of data) {
    const wc = w + String.fromCharCode(byte);
    if (table.has(wc)) {
      w = wc;
      continue;
    }
    emit(table.get(w) ?? 0);
    if (next < 4096) table.set(wc, next++);
    w = String.fromCharCode(byte);
  }
  if (w !== '') emit(table.get(w) ?? 0);
  emit(257);
  if (bits > 0) out.push((value << (8 - bits)) & 0xff);
  return Buffer.from(out);
}

function ascii85Encode(data: Uint8Array): Buffer {
  let text = '';
  for (let i = 0; i < data.length; i += 4) {
    const group = [...data.subarray(i, i + 4)];
    const n = group.length;
    while (group.length < 4) group.push(0);
    let v = group.reduce((acc, b) => acc * 256 + b, 0);
    if (n === 4 && v === 0) {
      text += 'z';
      continue;
    }
    const digits: string[] = [];
    for (let k = 0; k < 5; k++)
      [digits[4 - k], v] = [String.fromCharCode((v % 85) + 33), Math.floor(v / 85)];
    text += digits.slice(0, n + 1).join('');
  }
  return Buffer.from(`${text}~>`, 'latin1');
}

async function decoded(filter: string, input: Uint8Array): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  await DECODERS.get(filter)?.(input, { write: (c) => parts.push(Uint8Array.from(c)) > 0 });
  return Buffer.concat(parts);
}

describe('the stream filters', () => {
  it('LZW decodes what an encoder wrote, across code widths and the KwKwK case', async () => {
    const data = Buffer.concat([sample(6000), Buffer.alloc(3000, 0x61), sample(500)]);
    expect(await decoded('LZWDecode', lzwEncode(data))).toEqual(data);
  });

  it('the LZW encoder of these tests writes what pdf.js reads (so the decoder is checked against pdf.js)', async () => {
    // Short lines: pdf.js leaves out text beyond the page's edge.
    const lines = Array.from({ length: 60 }, (_, i) => `line ${i} word${i % 7} word${i % 11}`);
    const shown = lines.map((line) => `(${line}) Tj 0 -12 Td`).join(' ');
    const content = Buffer.from(`BT /F1 10 Tf 20 750 Td ${shown} ET`, 'latin1');
    const pdf = writePdf([
      { dict: '/Type /Catalog /Pages 2 0 R' },
      { dict: '/Type /Pages /Kids [3 0 R] /Count 1' },
      {
        dict: '/Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R',
      },
      { dict: '/Type /Font /Subtype /Type1 /BaseFont /Helvetica' },
      { dict: '/Filter /LZWDecode', stream: lzwEncode(content) },
    ]);
    const [page] = await extractPages(pdf, 'application/pdf');
    expect(page?.text.split('\n')).toEqual(lines);
    expect(await decoded('LZWDecode', lzwEncode(content))).toEqual(content);
  });

  it('ASCII85, ASCIIHex and RunLength decode as the standard says', async () => {
    const data = Buffer.concat([sample(101), Buffer.alloc(8)]);
    expect(await decoded('A85', ascii85Encode(data))).toEqual(data);
    expect(await decoded('AHx', Buffer.from('48 65 6C6c6f>ignored'))).toEqual(Buffer.from('Hello'));
    expect(await decoded('AHx', Buffer.from('7>'))).toEqual(Buffer.from([0x70]));
    const rl = Buffer.from([2, 0x41, 0x42, 0x43, 257 - 128, 0x5a, 128, 0x41]);
    expect(await decoded('RL', rl)).toEqual(
      Buffer.concat([Buffer.from('ABC'), Buffer.alloc(128, 0x5a)]),
    );
  });
});

describe('measureDecodedSize', () => {
  it('counts every stream as pdf.js would decode it, each filter chain included', async () => {
    const flate = sample(10_000);
    const chain = sample(4_000);
    const lzw = sample(3_000);
    const pdf = writePdf([
      ...CATALOG,
      { dict: '/Filter /FlateDecode', stream: deflateSync(flate) },
      { dict: '', stream: Buffer.alloc(50, 0x20) },
      {
        dict: '/Filter [/ASCIIHexDecode /FlateDecode]',
        stream: Buffer.from(`${deflateSync(chain).toString('hex')}>`),
      },
      { dict: '/Filter /LZW', stream: lzwEncode(lzw) },
      { dict: '/Filter /RL', stream: Buffer.from([257 - 100, 0x41, 128]) },
      { dict: '/Filter /DCTDecode', stream: Buffer.alloc(700) }, // an image: counted as stored
    ]);
    const size = await measureDecodedSize(pdf, MiB);
    expect(size).toEqual({ bytes: 10_000 + 50 + 4_000 + 3_000 + 100 + 700, encryption: 'none' });
  });

  it('follows filters and lengths given by reference, and finds endstream when the length lies', async () => {
    const data = sample(20_000);
    const pdf = writePdf([
      ...CATALOG,
      { dict: '/Filter 4 0 R', stream: deflateSync(data), length: '5 0 R' },
      { dict: '', value: '[/FlateDecode]' },
      { dict: '', value: '1' }, // a wrong length: the data runs to endstream
      // A reference to an object that is nowhere (it could be in an object stream): tried as Flate.
      { dict: '/Filter 99 0 R', stream: deflateSync(data) },
    ]);
    expect((await measureDecodedSize(pdf, MiB)).bytes).toBe(40_000);
  });

  it('counts an object hidden inside another stream, where only the xref table would find it', async () => {
    const hidden = writePdf([
      { dict: '/Filter /FlateDecode', stream: deflateSync(sample(30_000)) },
    ]);
    const pdf = writePdf([...CATALOG, { dict: '', stream: hidden }]);
    expect((await measureDecodedSize(pdf, MiB)).bytes).toBeGreaterThanOrEqual(30_000);
  });

  it('stops as soon as the sum passes the budget, without inflating the rest', async () => {
    const bomb = inflationBombPdf(64 * MiB);
    await expect(measureDecodedSize(bomb, 8 * MiB)).rejects.toBeInstanceOf(DecodedSizeExceeded);
    const size = await measureDecodedSize(bomb, 65 * MiB);
    expect(size.bytes).toBeGreaterThan(64 * MiB);
  });

  it('counts a pdfkit document, a real one, well under the default budget', async () => {
    const pdf = await pdfFromPages([[{ paragraph: sampleParagraph(1) }], [{ paragraph: 'x' }]]);
    const size = await measureDecodedSize(pdf, 200 * MiB);
    expect(size.bytes).toBeGreaterThan(pdf.length / 2);
    expect(size.bytes).toBeLessThan(100_000);
  });

  it('counts a file it cannot decrypt (not the standard handler) as stored', async () => {
    const pdf = writePdf(
      [
        { dict: '/Type /Catalog /Pages 2 0 R' },
        { dict: '/Type /Pages /Kids [] /Count 0' },
        { dict: '/Filter /Adobe.PubSec /V 4 /R 4' },
        { dict: '/Filter /FlateDecode', stream: sample(1234) },
      ],
      '/Encrypt 3 0 R ',
    );
    expect(await measureDecodedSize(pdf, MiB)).toEqual({ bytes: 1234, encryption: 'closed' });
  });
});

describe('measureDecodedSize of encrypted files', () => {
  const pages = [[{ paragraph: sampleParagraph(2, 30) }], [{ paragraph: sampleParagraph(3, 30) }]];

  // pdfkit's handlers: RC4 40 bit (R2), RC4 128 bit (R3), AES-128 (R4), AES-256 (R5).
  it.each(['1.3', '1.4', '1.6', '1.7ext3'] as const)(
    'PDF %s encrypted with an empty user password: decrypted, then counted like the plain file',
    async (pdfVersion) => {
      const plain = await measureDecodedSize(await pdfFromPages(pages, { pdfVersion }), MiB);
      const secured = await pdfFromPages(pages, { ownerPassword: 'owner-secret', pdfVersion });
      expect(secured.includes('/Encrypt')).toBe(true);
      expect(await measureDecodedSize(secured, MiB)).toEqual({
        bytes: plain.bytes,
        encryption: 'decrypted',
      });
    },
  );

  it('a file that needs a user password is counted as stored: pdf.js decodes none of it', async () => {
    const secured = await pdfFromPages(pages, { userPassword: 'secret', pdfVersion: '1.7ext3' });
    expect((await measureDecodedSize(secured, MiB)).encryption).toBe('closed');
  });

  it('an AES-256 (revision 6) bomb is decrypted and stopped at the budget; pdf.js opens its like and reads it', async () => {
    const bomb = encryptedBombPdf(64 * MiB);
    await expect(measureDecodedSize(bomb, 8 * MiB)).rejects.toBeInstanceOf(DecodedSizeExceeded);
    // The same construction, small: pdf.js accepts its empty password and reads the text.
    const small = encryptedBombPdf(MiB);
    expect(await measureDecodedSize(small, 2 * MiB)).toMatchObject({ encryption: 'decrypted' });
    const [page] = await extractPages(small, 'application/pdf');
    expect(page?.text).toBe('Inflated');
  });
});
