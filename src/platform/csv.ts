import { Readable } from 'node:stream';

/**
 * CSV for spreadsheets (RFC 4180): fields separated by commas, records ended by CRLF, a field
 * quoted when it holds a comma, a double quote, CR or LF, its double quotes doubled.
 *
 * Formula injection (CWE-1236): a spreadsheet runs a cell starting with `=`, `+`, `-` or `@` as a
 * formula, and some also one starting with a tab or a carriage return. Every text cell starting
 * with one of those six characters is neutralised by prefixing a single quote (`'`), which
 * spreadsheets show as text; the rest of the value is kept as it was. Numbers the service writes
 * itself (ratings, counts) are not text from users and are written as they are.
 */

export type CsvCell = string | number | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One field: null and undefined are an empty field; text is neutralised, then quoted if needed. */
export function csvCell(value: CsvCell): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError('CSV cells take finite numbers only');
    return String(value);
  }
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** One record with its CRLF line ending. */
export function csvRow(cells: readonly CsvCell[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/**
 * A CSV file as a stream: the header row, then the rows `page` returns, page by page as the client
 * takes them (`page(null)` first, then `page(last row of the previous page)` until a page comes
 * back shorter than `pageRows`), so memory stays at one page whatever the number of rows. The
 * first page is read before the stream is returned, so a database that is down is an error answer
 * rather than a cut-off file.
 */
export async function pagedCsv<T>(
  header: readonly string[],
  page: (after: T | null) => Promise<T[]>,
  cells: (row: T) => readonly CsvCell[],
  pageRows: number,
): Promise<Readable> {
  const first = await page(null);
  async function* chunks(): AsyncGenerator<string> {
    yield csvRow(header);
    let rows = first;
    while (rows.length > 0) {
      yield rows.map((row) => csvRow(cells(row))).join('');
      const last = rows.at(-1);
      if (rows.length < pageRows || last === undefined) return;
      rows = await page(last);
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}
