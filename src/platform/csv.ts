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
