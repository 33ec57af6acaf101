import { describe, expect, it } from 'vitest';
import { csvCell, csvRow } from './csv.js';

/** A small RFC 4180 reader, to check that what is written reads back as the same cells. */
function parse(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charAt(i);
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      [row, cell] = [[], ''];
      i += 1;
    } else cell += c;
  }
  return rows;
}

describe('csvCell', () => {
  it('writes plain text, numbers and empty values as they are', () => {
    expect(csvCell('answer_quality')).toBe('answer_quality');
    expect(csvCell('')).toBe('');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(5)).toBe('5');
    expect(csvCell(-1)).toBe('-1');
    expect(csvCell('2026-01-01T12:00:00.000Z')).toBe('2026-01-01T12:00:00.000Z');
  });

  it('refuses numbers that are not finite', () => {
    expect(() => csvCell(Number.NaN)).toThrow(RangeError);
    expect(() => csvCell(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });

  it('quotes commas, quotes, CR and LF, doubling the quotes (RFC 4180)', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line 1\nline 2')).toBe('"line 1\nline 2"');
    expect(csvCell('line 1\r\nline 2')).toBe('"line 1\r\nline 2"');
    expect(csvCell('"')).toBe('""""');
  });

  it.each([
    ['=HYPERLINK("http://evil.example","x")', `"'=HYPERLINK(""http://evil.example"",""x"")"`],
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1+1', "'-1+1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tindent', "'\tindent"],
    ['\rcarriage', `"'\rcarriage"`],
  ])('neutralises a formula start: %j', (value, written) => {
    expect(csvCell(value)).toBe(written);
  });

  it('neutralises only the first character, not formula characters elsewhere', () => {
    expect(csvCell('a=b')).toBe('a=b');
    expect(csvCell(' =1+1')).toBe(' =1+1');
    expect(csvCell("'=1")).toBe("'=1");
  });

  it('keeps unicode as it is', () => {
    expect(csvCell('Ärztin 👩‍⚕️ 日本語')).toBe('Ärztin 👩‍⚕️ 日本語');
  });
});

describe('csvRow', () => {
  it('joins cells with commas and ends with CRLF', () => {
    expect(csvRow(['id', 'rating', null, 3])).toBe('id,rating,,3\r\n');
  });

  it('reads back as the same cells (with the neutralising quote added)', () => {
    const cells = ['plain', 'a,b', 'x "y" z', 'two\nlines', '=cmd|calc', '', 'ü'];
    const [row] = parse(csvRow(cells));
    expect(row).toEqual(['plain', 'a,b', 'x "y" z', 'two\nlines', "'=cmd|calc", '', 'ü']);
  });
});
