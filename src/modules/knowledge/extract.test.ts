import { describe, expect, it } from 'vitest';
import {
  corruptPdf,
  encryptedPdf,
  largePdf,
  pdfFromPages,
  sampleParagraph,
  textlessPdf,
} from '../../../test/helpers/pdf.js';
import { ExtractionError, extractPages, layoutText, type PositionedText } from './extract.js';

const PDF = 'application/pdf';

async function extractionError(promise: Promise<unknown>): Promise<ExtractionError> {
  const error: unknown = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ExtractionError);
  return error as ExtractionError;
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

describe('extractPages (PDF)', () => {
  it('returns one entry per page, numbered from 1, with text in reading order', async () => {
    const long = sampleParagraph(0, 8);
    const pdf = await pdfFromPages([
      [{ heading: '1 Diagnosis' }, { paragraph: long }, { paragraph: 'Refer if in doubt.' }],
      [],
      [{ heading: '2 Treatment' }, { paragraph: 'Offer lifestyle advice first.' }],
    ]);
    const pages = await extractPages(pdf, PDF);
    expect(pages.map((p) => p.page)).toEqual([1, 2, 3]);
    const [first, second, third] = pages.map((p) => p.text);
    // Heading, wrapped paragraph (line breaks only), next paragraph: blank lines between blocks.
    const blocks = first?.split('\n\n') ?? [];
    expect(blocks).toHaveLength(3);
    expect(blocks[0]).toBe('1 Diagnosis');
    expect(blocks[1]?.split('\n').length).toBeGreaterThan(2); // the long paragraph wrapped
    expect(squash(blocks[1] ?? '')).toBe(long);
    expect(blocks[2]).toBe('Refer if in doubt.');
    expect(second).toBe('');
    expect(third).toBe('2 Treatment\n\nOffer lifestyle advice first.');
  });

  it('rejects a password-protected PDF as encrypted', async () => {
    const error = await extractionError(extractPages(await encryptedPdf(), PDF));
    expect(error.code).toBe('encrypted');
    expect(error.message).toMatch(/password/i);
    expect(error.details).toEqual({ code: 'encrypted', message: error.message });
  });

  it('rejects garbage after the PDF magic, and a truncated PDF, as corrupt', async () => {
    expect((await extractionError(extractPages(await corruptPdf(), PDF))).code).toBe('corrupt');
    const valid = await pdfFromPages([[{ paragraph: sampleParagraph(1) }]]);
    const truncated = valid.subarray(0, Math.floor(valid.length / 2));
    const error = await extractionError(extractPages(truncated, PDF));
    expect(error.code).toBe('corrupt');
    expect(error.message).toMatch(/damaged|not a valid PDF/);
  });

  it('rejects a PDF without any text (scanned, drawings only) as no_text', async () => {
    const error = await extractionError(extractPages(await textlessPdf(), PDF));
    expect(error.code).toBe('no_text');
    expect(error.message).toMatch(/OCR/);
  });

  it('refuses more pages than the limit before reading any', async () => {
    const pdf = await pdfFromPages([
      [{ paragraph: 'a' }],
      [{ paragraph: 'b' }],
      [{ paragraph: 'c' }],
    ]);
    const error = await extractionError(extractPages(pdf, PDF, { maxPages: 2 }));
    expect(error).toMatchObject({ code: 'EXTRACTION_LIMIT', limit: 'pages' });
    expect(error.message).toContain('3 pages');
    await expect(extractPages(pdf, PDF, { maxPages: 3 })).resolves.toHaveLength(3);
  });

  it('stops when aborted, with the abort reason rather than an extraction error', async () => {
    const pdf = await pdfFromPages([[{ paragraph: 'a' }]]);
    await expect(extractPages(pdf, PDF, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('extracts a 200-page document with every page and heading in place', async () => {
    const pdf = await largePdf(200);
    const started = performance.now();
    const pages = await extractPages(pdf, PDF);
    const seconds = (performance.now() - started) / 1000;
    expect(pages).toHaveLength(200);
    expect(pages[0]?.text.split('\n')[0]).toBe('1.1 Diagnosis');
    expect(pages[199]?.text.split('\n')[0]).toBe('200.1 Special Populations');
    expect(pages.every((p) => p.text.length > 1000)).toBe(true);
    // Measured at ~400 pages/s; the bound only catches a gross regression on a busy machine.
    expect(seconds).toBeLessThan(10);
  });
});

describe('extractPages (text)', () => {
  it('returns one entry without a page number, with the BOM dropped and line ends normalised', async () => {
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('Title\r\n\r\nFirst line\rsecond line\n', 'utf8'),
    ]);
    expect(await extractPages(bytes, 'text/plain')).toEqual([
      { page: null, text: 'Title\n\nFirst line\nsecond line\n' },
    ]);
  });

  it('rejects a text file of only whitespace as no_text and invalid UTF-8 as corrupt', async () => {
    const blank = await extractionError(extractPages(Buffer.from(' \n\t\n'), 'text/plain'));
    expect(blank.code).toBe('no_text');
    const latin1 = await extractionError(
      extractPages(Buffer.from('caf\xe9', 'latin1'), 'text/plain'),
    );
    expect(latin1.code).toBe('corrupt');
  });
});

describe('layoutText', () => {
  const run = (str: string, x: number, y: number, extra: Partial<PositionedText> = {}) => ({
    str,
    x,
    y,
    width: str.length * 5,
    size: 10,
    hasEOL: false,
    ...extra,
  });

  it('separates runs placed apart without a space, and adds no space where one exists', () => {
    expect(layoutText([run('blood', 0, 700), run('pressure', 40, 700)])).toBe('blood pressure');
    expect(layoutText([run('blood ', 0, 700), run('pressure', 30, 700)])).toBe('blood pressure');
    expect(layoutText([run('HbA', 0, 700), run('1c', 15, 700)])).toBe('HbA1c'); // adjacent
  });

  it('keeps a superscript on its line and starts a new line at a new baseline', () => {
    expect(layoutText([run('dose', 0, 700), run('1', 20, 704, { size: 6 })])).toBe('dose1');
    expect(layoutText([run('one', 0, 700), run('two', 0, 688)])).toBe('one\ntwo');
  });

  it('breaks paragraphs at a large vertical gap, a font-size change or a jump up the page', () => {
    const lines = [
      run('Heading', 0, 720, { size: 16, hasEOL: true }),
      run('line one', 0, 700, { hasEOL: true }),
      run('line two', 0, 688, { hasEOL: true }),
      run('line three', 0, 676, { hasEOL: true }),
      run('after a gap', 0, 650, { hasEOL: true }),
      run('next column', 300, 720),
    ];
    expect(layoutText(lines)).toBe(
      'Heading\n\nline one\nline two\nline three\n\nafter a gap\n\nnext column',
    );
  });

  it('drops control characters that broken font encodings produce', () => {
    expect(layoutText([run('dose\u0000 5\u0007 mg\ttwice', 0, 700)])).toBe('dose 5 mg twice');
  });

  it('treats empty end-of-line runs as line ends only', () => {
    const runs = [
      run('first', 0, 700),
      run('', 0, 688, { hasEOL: true, width: 0 }),
      run('second', 0, 688),
    ];
    expect(layoutText(runs)).toBe('first\nsecond');
  });
});
