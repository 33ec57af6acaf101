import type { PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { SupportedType } from './content-type.js';
import { DecodedSizeExceeded, measureDecodedSize } from './pdf-budget.js';
import { layoutText, type PositionedText } from './pdf-layout.js';

export { layoutText, type PositionedText } from './pdf-layout.js';

/**
 * Text extraction for indexing: one entry per PDF page (numbered from 1, so answers can cite the
 * page), one entry with `page: null` for a text file. Lines end in "\n" and paragraphs in "\n\n",
 * which is what the chunker reads headings and paragraph boundaries from.
 */

export interface ExtractedPage {
  page: number | null;
  text: string;
}

export type ExtractionErrorCode = 'encrypted' | 'corrupt' | 'no_text' | 'EXTRACTION_LIMIT';

/** The budget an EXTRACTION_LIMIT failure exceeded (DECISIONS 6, and the worker's heap). */
export type BudgetName = 'decoded_bytes' | 'pages' | 'chunks' | 'cpu_time' | 'memory';

export interface ExtractionErrorDetails {
  code: ExtractionErrorCode;
  message: string;
  limit?: BudgetName;
}

/** A document that cannot be indexed; `details` becomes the indexing job's `error_details`. */
export class ExtractionError extends Error {
  readonly limit: BudgetName | undefined;

  constructor(
    readonly code: ExtractionErrorCode,
    message: string,
    options?: { cause?: unknown; limit?: BudgetName },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ExtractionError';
    this.limit = options?.limit;
  }

  get details(): ExtractionErrorDetails {
    const { code, message, limit } = this;
    return limit === undefined ? { code, message } : { code, message, limit };
  }

  /** Rebuilt from `details`, e.g. after crossing from a worker thread. */
  static from(details: ExtractionErrorDetails): ExtractionError {
    return details.limit === undefined
      ? new ExtractionError(details.code, details.message)
      : new ExtractionError(details.code, details.message, { limit: details.limit });
  }
}

/** A job over one of its budgets: it fails with EXTRACTION_LIMIT, and retrying cannot help. */
export const limitExceeded = (limit: BudgetName, message: string): ExtractionError =>
  new ExtractionError('EXTRACTION_LIMIT', message, { limit });

export interface ExtractOptions {
  /** Bounds the work one upload can cause; more pages fail with EXTRACTION_LIMIT. */
  maxPages?: number;
  /** Decoded PDF stream data allowed, counted before pdf.js reads the file. */
  maxDecodedBytes?: number;
  /** Stops between pages, e.g. when a newer version of the document supersedes the job. */
  signal?: AbortSignal;
}

export const DEFAULT_MAX_PAGES = 5000;
export const DEFAULT_MAX_DECODED_BYTES = 200 * 1024 * 1024;

/** "200 MB" for a byte count in whole MiB, as KB_MAX_DECODED_MB sets it. */
const megabytes = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MB`;

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
  await checkDecodedSize(bytes, options.maxDecodedBytes ?? DEFAULT_MAX_DECODED_BYTES);
  options.signal?.throwIfAborted();
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

/** Fails before pdf.js opens the file when its streams decode to more than `budget` bytes. */
async function checkDecodedSize(bytes: Uint8Array, budget: number): Promise<void> {
  try {
    await measureDecodedSize(bytes, budget);
  } catch (error) {
    if (!(error instanceof DecodedSizeExceeded)) throw error;
    throw limitExceeded(
      'decoded_bytes',
      `The PDF's decoded stream data exceeds ${megabytes(budget)}; at most ${megabytes(budget)} can be indexed.`,
    );
  }
}

async function readPages(pdf: PDFDocumentProxy, options: ExtractOptions): Promise<ExtractedPage[]> {
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  if (pdf.numPages > maxPages) {
    throw limitExceeded(
      'pages',
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
