/**
 * Page layout for PDF text extraction: pdf.js gives positioned runs of text; these become lines,
 * and lines paragraphs, which is what the chunker reads headings and paragraph boundaries from.
 */

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
