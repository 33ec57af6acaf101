import type { PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { SupportedType } from './content-type.js';

/**
 * Text extraction for indexing: one entry per PDF page (numbered from 1, so answers can cite the
 * page), one entry with `page: null` for a text file. Lines end in "\n" and paragraphs in "\n\n",
 * which is what the chunker reads headings and paragraph boundaries from.
 */

export interface ExtractedPage {
  page: number | null;
  text: string;
}

export type ExtractionErrorCode = 'encrypted' | 'corrupt' | 'no_text' | 'too_many_pages';

/** A document that cannot be indexed; `details` becomes the indexing job's `error_details`. */
export class ExtractionError extends Error {
  constructor(
    readonly code: ExtractionErrorCode,
    message: string,
    options?: { cause: unknown },
  ) {
    super(message, options);
    this.name = 'ExtractionError';
  }

  get details(): { code: ExtractionErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

export interface ExtractOptions {
  /** Bounds the work one upload can cause; more pages fail with `too_many_pages`. */
  maxPages?: number;
  /** Stops between pages, e.g. when a newer version of the document supersedes the job. */
  signal?: AbortSignal;
}

export const DEFAULT_MAX_PAGES = 5000;

export async function extractPages(
  bytes: Uint8Array,
  type: SupportedType,
  options: ExtractOptions = {},
): Promise<ExtractedPage[]> {
  const pages =
    type === 'application/pdf' ? await extractPdf(bytes, options) : [extractText(bytes)];
  if (pages.every((p) => p.text.trim() === '')) {
    throw new ExtractionError(
      'no_text',
      type === 'application/pdf'
        ? 'No text could be extracted from the PDF: it may consist of scanned images. Upload a version with a text layer (run OCR first).'
        : 'The text file contains no text.',
    );
  }
  return pages;
}

function extractText(bytes: Uint8Array): ExtractedPage {
  let text: string;
  try {
    // The upload was sniffed as UTF-8 already; fatal still guards against a mislabelled call.
    // The default ignoreBOM: false drops a leading byte order mark.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    throw new ExtractionError('corrupt', 'The text file is not valid UTF-8.', { cause: error });
  }
  return { page: null, text: text.replace(/\r\n?/g, '\n') };
}

async function extractPdf(bytes: Uint8Array, options: ExtractOptions): Promise<ExtractedPage[]> {
  // Loaded on first use: pdf.js takes ~0.4 s to import, which the API process should not pay.
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const task = pdfjs.getDocument({
    // A copy: pdf.js takes ownership of (and may detach) the buffer it is given, and refuses
    // Node Buffers.
    data: new Uint8Array(bytes),
    // In Node pdf.js runs its "fake worker" in this thread: no worker thread or worker file.
    isEvalSupported: false,
    useSystemFonts: false,
    disableFontFace: true,
    useWorkerFetch: false,
    isOffscreenCanvasSupported: false,
    enableXfa: false,
    verbosity: 0, // errors only go through our ExtractionError, never to the console
  });
  try {
    const pdf = await task.promise.catch((error: unknown) => {
      throw toExtractionError(error);
    });
    return await readPages(pdf, options);
  } finally {
    await task.destroy();
  }
}

async function readPages(pdf: PDFDocumentProxy, options: ExtractOptions): Promise<ExtractedPage[]> {
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  if (pdf.numPages > maxPages) {
    throw new ExtractionError(
      'too_many_pages',
      `The PDF has ${pdf.numPages} pages; at most ${maxPages} can be indexed.`,
    );
  }
  const pages: ExtractedPage[] = [];
  for (let number = 1; number <= pdf.numPages; number++) {
    options.signal?.throwIfAborted();
    try {
      const page = await pdf.getPage(number);
      pages.push({ page: number, text: layoutText(await positionedText(page)) });
      page.cleanup(); // frees fonts and operator lists held for the page
    } catch (error) {
      throw toExtractionError(error, number);
    }
  }
  return pages;
}

function toExtractionError(error: unknown, page?: number): ExtractionError {
  if (error instanceof ExtractionError) return error;
  const name = error instanceof Error || isNamed(error) ? error.name : '';
  if (name === 'PasswordException') {
    return new ExtractionError(
      'encrypted',
      'The PDF is password-protected. Upload a copy without a password.',
      { cause: error },
    );
  }
  const where = page === undefined ? 'The PDF' : `Page ${page} of the PDF`;
  return new ExtractionError(
    'corrupt',
    `${where} could not be read: the file is damaged or not a valid PDF.`,
    { cause: error },
  );
}

function isNamed(value: unknown): value is { name: string } {
  return (
    typeof value === 'object' && value !== null && typeof Reflect.get(value, 'name') === 'string'
  );
}

/** A run of text at a position on the page, in PDF units (y grows upwards). */
export interface PositionedText {
  str: string;
  x: number;
  y: number;
  width: number;
  /** Font size: the text's vertical scale. */
  size: number;
  /** pdf.js marks the last run of a line. */
  hasEOL: boolean;
}

async function positionedText(page: PDFPageProxy): Promise<PositionedText[]> {
  const content = await page.getTextContent();
  const runs: PositionedText[] = [];
  for (const item of content.items) {
    if (!('str' in item)) continue; // marked-content delimiters carry no text
    const [a = 0, b = 0, c = 0, d = 0, x = 0, y = 0] = item.transform as number[];
    // The scale survives rotation and skew, unlike `height`, which is 0 for empty runs.
    const size = Math.max(Math.hypot(c, d), Math.hypot(a, b));
    runs.push({ str: item.str, x, y, width: item.width, size, hasEOL: item.hasEOL });
  }
  return runs;
}

interface Line {
  text: string;
  y: number;
  size: number;
}

/** Joins text runs into lines and lines into paragraphs. Exported for tests. */
export function layoutText(runs: PositionedText[]): string {
  const lines = toLines(runs);
  const spacing = typicalLineSpacing(lines);
  let text = '';
  lines.forEach((line, i) => {
    const previous = lines[i - 1];
    if (previous) text += startsParagraph(previous, line, spacing) ? '\n\n' : '\n';
    text += line.text;
  });
  return text;
}

// Broken font encodings yield control characters; NUL would even be refused by PostgreSQL.
// eslint-disable-next-line no-control-regex -- matching them is the point
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

function toLines(runs: PositionedText[]): Line[] {
  const lines: Line[] = [];
  let current: (Line & { end: number }) | null = null;
  const close = () => {
    const text = current?.text.replace(/\s+/g, ' ').trim();
    if (current && text) lines.push({ text, y: current.y, size: current.size });
    current = null;
  };
  for (const run of runs) {
    // Empty runs are bare end-of-line markers; their position is already the next line's.
    if (run.str !== '') {
      // A new baseline without an end-of-line marker still starts a new line. Superscripts
      // (footnote marks) sit less than half a font size higher and stay on their line.
      if (current && Math.abs(run.y - current.y) > 0.6 * Math.max(current.size, run.size)) close();
      if (!current) current = { text: '', y: run.y, size: run.size, end: run.x };
      else if (needsSpace(current, run)) current.text += ' ';
      current.text += run.str.replace(CONTROL_CHARACTERS, '');
      current.end = run.x + run.width;
      current.size = Math.max(current.size, run.size);
    }
    if (run.hasEOL) close();
  }
  close();
  return lines;
}

/** Runs placed apart without a space character between them are separate words. */
function needsSpace(line: Line & { end: number }, run: PositionedText): boolean {
  const gap = run.x - line.end;
  return gap > 0.15 * run.size && !/\s$/.test(line.text) && !/^\s/.test(run.str);
}

/**
 * The distance between consecutive lines inside a paragraph: the lower quartile of the gaps, so a
 * page of many short paragraphs still yields the line spacing rather than the paragraph spacing.
 */
function typicalLineSpacing(lines: Line[]): number | null {
  const gaps: number[] = [];
  for (let i = 1; i < lines.length; i++) {
    const [above, below] = [lines[i - 1], lines[i]];
    if (above && below && above.y > below.y) gaps.push(above.y - below.y);
  }
  gaps.sort((p, q) => p - q);
  return gaps[Math.floor((gaps.length - 1) / 4)] ?? null;
}

function startsParagraph(above: Line, line: Line, spacing: number | null): boolean {
  const gap = above.y - line.y;
  if (gap < 0) return true; // moved up the page: a new column or a text box
  // A change of font size separates a heading from its body even when they sit close together.
  if (Math.abs(above.size - line.size) > 0.15 * Math.max(above.size, line.size)) return true;
  return spacing !== null && gap > 1.4 * spacing + 0.5;
}
