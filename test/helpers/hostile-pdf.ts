import { createCipheriv, randomBytes } from 'node:crypto';
import { deflateRawSync, constants as zlib } from 'node:zlib';
import { hash2B } from '../../src/modules/knowledge/pdf-decrypt.js';

/**
 * Hand-written PDFs that attack the extractor, built byte by byte so each test states exactly what
 * the file does. pdfkit cannot produce them: it writes only well-behaved documents.
 */

/** One indirect object: its dictionary (without `<< >>`) and, for a stream, its raw data. */
export interface PdfObject {
  dict: string;
  stream?: Buffer;
  /** What to write after /Length instead of the data's true length (e.g. a reference). */
  length?: string;
  /** Instead of a dictionary: any other value, written as is (`/FlateDecode`, `42`). */
  value?: string;
}

/**
 * Serialises objects 1..n (object 1 is the catalog) with a correct cross-reference table, so
 * pdf.js reads the file as written instead of reconstructing it.
 */
export function writePdf(objects: PdfObject[], trailer = ''): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = parts[0]?.length ?? 0;
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(offset);
    const value = object.value ?? `<< ${object.dict} >>`;
    const length = object.length ?? String(object.stream?.length ?? 0);
    const body =
      object.stream === undefined
        ? [Buffer.from(`${i + 1} 0 obj\n${value}\nendobj\n`, 'latin1')]
        : [
            Buffer.from(
              `${i + 1} 0 obj\n<< ${object.dict} /Length ${length} >>\nstream\n`,
              'latin1',
            ),
            object.stream,
            Buffer.from('\nendstream\nendobj\n', 'latin1'),
          ];
    for (const part of body) {
      parts.push(part);
      offset += part.length;
    }
  });
  const xref = [
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`,
    ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`),
    `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${trailer}>>\nstartxref\n${offset}\n%%EOF\n`,
  ].join('');
  parts.push(Buffer.from(xref, 'latin1'));
  return Buffer.concat(parts);
}

const FONT = '/Type /Font /Subtype /Type1 /BaseFont /Helvetica';

/**
 * A zlib stream of `totalBytes` spaces without ever holding them: one sync-flushed deflate block
 * of 1 MiB of spaces (it starts with a literal, so it refers to nothing before it) repeated, then
 * an empty final block and the Adler-32 of the whole, as a real compressor would write it.
 */
export function deflatedSpaces(totalBytes: number): Buffer {
  const MiB = 1024 * 1024;
  if (totalBytes % MiB !== 0) throw new RangeError('totalBytes must be whole MiB');
  const block = deflateRawSync(Buffer.alloc(MiB, 0x20), {
    level: 9,
    finishFlush: zlib.Z_SYNC_FLUSH,
  });
  const repeats = totalBytes / MiB;
  // Adler-32 of n bytes of value c: a = 1 + n·c, b = n + c·n(n+1)/2 (mod 65521).
  const n = BigInt(totalBytes);
  const a = (1n + n * 0x20n) % 65521n;
  const b = (n + (0x20n * n * (n + 1n)) / 2n) % 65521n;
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(Number((b << 16n) | a));
  // 0x78 0xda: deflate, 32 KiB window, best compression; 0x03 0x00: an empty final fixed block.
  return Buffer.concat([
    Buffer.from([0x78, 0xda]),
    ...Array.from({ length: repeats }, () => block),
    Buffer.from([0x03, 0x00]),
    adler,
  ]);
}

/**
 * A one-page PDF whose content stream is a short text followed by `inflatedBytes` of spaces
 * compressed about 1000:1 (3 GiB in about 3 MB): a decompression bomb.
 */
export function inflationBombPdf(inflatedBytes: number): Buffer {
  return writePdf(inflationBombObjects(inflatedBytes));
}

function inflationBombObjects(inflatedBytes: number): PdfObject[] {
  const text = Buffer.from('BT /F1 12 Tf 72 720 Td (Inflated) Tj ET\n', 'latin1');
  const padding = deflatedSpaces(inflatedBytes);
  // The page's contents are two streams, read as one: a line of text, then the padding.
  return [
    { dict: '/Type /Catalog /Pages 2 0 R' },
    { dict: '/Type /Pages /Kids [3 0 R] /Count 1' },
    {
      dict: '/Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents [5 0 R 6 0 R]',
    },
    { dict: FONT },
    { dict: '', stream: text },
    { dict: '/Filter /FlateDecode', stream: padding },
  ];
}

/**
 * A one-page PDF of `depth` form XObjects, each drawing the next one twice, the last one a line
 * of text: 2^depth text runs from a few KB. pdf.js extracts the text of every drawing.
 */
export function nestedFormsPdf(depth: number): Buffer {
  const first = 5; // objects 1-4: catalog, pages, page, font
  const forms: PdfObject[] = Array.from({ length: depth }, (_, i) => {
    const last = i === depth - 1;
    const content = last
      ? 'BT /F1 12 Tf 72 720 Td (Nested) Tj ET'
      : `q /X${i + 1} Do Q q /X${i + 1} Do Q`;
    const next = last ? '' : `/XObject << /X${i + 1} ${first + i + 1} 0 R >>`;
    return {
      dict: `/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> ${next} >>`,
      stream: Buffer.from(content, 'latin1'),
    };
  });
  return writePdf([
    { dict: '/Type /Catalog /Pages 2 0 R' },
    { dict: '/Type /Pages /Kids [3 0 R] /Count 1' },
    {
      dict: `/Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /X0 ${first} 0 R >> >> /Contents ${first + depth} 0 R`,
    },
    { dict: FONT },
    ...forms,
    { dict: '', stream: Buffer.from('/X0 Do', 'latin1') },
  ]);
}

/** `pages` pages sharing one small content stream: a large page count from a small file. */
export function manyPagesPdf(pages: number): Buffer {
  const kids = Array.from({ length: pages }, (_, i) => `${i + 6} 0 R`).join(' ');
  const page = {
    dict: '/Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R',
  };
  return writePdf([
    { dict: '/Type /Catalog /Pages 2 0 R' },
    { dict: `/Type /Pages /Kids [${kids}] /Count ${pages}` },
    { dict: FONT },
    { dict: '', stream: Buffer.from('BT /F1 12 Tf 72 720 Td (Page) Tj ET', 'latin1') },
    { dict: '/Producer (mas tests)' },
    ...Array.from({ length: pages }, () => page),
  ]);
}

const aes256 = (key: Buffer, iv: Buffer, data: Buffer, pad: boolean) => {
  const cipher = createCipheriv('aes-256-cbc', key, iv);
  cipher.setAutoPadding(pad);
  return Buffer.concat([cipher.update(data), cipher.final()]);
};

/**
 * `inflationBombPdf` encrypted with AES-256 (revision 6) and an empty user password, as a
 * "protected" PDF that any reader opens: pdf.js decrypts its streams, then inflates them. The
 * salts and the file key are random; the key is only in UE (and OE, under a random owner password
 * nobody knows).
 */
export function encryptedBombPdf(inflatedBytes: number): Buffer {
  const fileKey = randomBytes(32);
  const [validation, keySalt] = [randomBytes(8), randomBytes(8)];
  const u = Buffer.concat([hash2B(validation, Buffer.alloc(0)), validation, keySalt]);
  const ue = aes256(hash2B(keySalt, Buffer.alloc(0)), Buffer.alloc(16), fileKey, false);
  // The owner entries only have to look right: no test opens the file as its owner.
  const o = randomBytes(48);
  const oe = randomBytes(32);
  const perms = randomBytes(16);
  const encrypt = (data: Buffer) => {
    const iv = randomBytes(16);
    return Buffer.concat([iv, aes256(fileKey, iv, data, true)]);
  };
  const hex = (b: Buffer) => `<${b.toString('hex')}>`;
  const objects = inflationBombObjects(inflatedBytes).map((object) =>
    object.stream === undefined ? object : { ...object, stream: encrypt(object.stream) },
  );
  objects.push({
    dict: `/Filter /Standard /V 5 /R 6 /Length 256 /CF << /StdCF << /CFM /AESV3 /AuthEvent /DocOpen /Length 32 >> >> /StmF /StdCF /StrF /StdCF /O ${hex(o)} /U ${hex(u)} /OE ${hex(oe)} /UE ${hex(ue)} /P -4 /Perms ${hex(perms)}`,
  });
  const id = hex(randomBytes(16));
  return writePdf(objects, `/Encrypt ${objects.length} 0 R /ID [${id} ${id}] `);
}
