import type { ExtractedPage } from './extract.js';
import { sentencesOf, type Sentence } from './sentences.js';

/**
 * Splits extracted pages into retrieval chunks of about `targetChars`, cut between sentences, with
 * whole sentences of overlap so a fact stated across a cut is still found in one chunk. A chunk
 * may run on across a page break (paragraphs do) and belongs to the page where it starts. Each
 * heading starts a new chunk and is in no chunk's text: it is the `heading` of the chunks below
 * it, so the indexer decides how to use it. Deterministic: the same pages give the same chunks.
 */

export interface Chunk {
  /** Position in the document, from 0. */
  index: number;
  text: string;
  /** The page where the chunk starts; null for text files. */
  page: number | null;
  /** The nearest heading above the chunk's start. */
  heading: string | null;
  /** Offset of the chunk's first sentence in the extracted text of `page`. */
  startOffset: number;
}

export interface ChunkOptions {
  targetChars?: number;
  overlapChars?: number;
  /** A budget: one more chunk throws TooManyChunks, before the rest of the text is cut. */
  maxChunks?: number;
}

export class TooManyChunks extends Error {
  constructor(readonly max: number) {
    super(`more than ${max} chunks`);
    this.name = 'TooManyChunks';
  }
}

type Unit = { heading: string } | Sentence;

export function chunkPages(pages: readonly ExtractedPage[], options: ChunkOptions = {}): Chunk[] {
  const target = Math.max(100, options.targetChars ?? 800);
  const overlap = Math.max(0, options.overlapChars ?? 150);
  const running = runningLines(pages);
  const units = pages.flatMap((page) => pageUnits(page, running, target));
  return assemble(units, target, overlap, options.maxChunks ?? Infinity);
}

function assemble(units: Unit[], target: number, overlap: number, max: number): Chunk[] {
  const chunks: Chunk[] = [];
  let heading: string | null = null;
  let current: Sentence[] = [];
  let length = 0; // of joinSentences(current), kept as we go: chunks may hold many sentences
  const emit = () => {
    const [first] = current;
    if (!first) return;
    if (chunks.length >= max) throw new TooManyChunks(max);
    const [text, index] = [joinSentences(current), chunks.length];
    chunks.push({ index, text, page: first.page, heading, startOffset: first.offset });
  };
  for (const unit of units) {
    if ('heading' in unit) {
      emit();
      [current, length] = [[], 0]; // no overlap into another section
      heading = unit.heading;
      continue;
    }
    if (current.length > 0 && length + separator(unit).length + unit.text.length > target) {
      emit();
      current = overlapTail(current, Math.min(overlap, target - unit.text.length - 2));
      length = joinSentences(current).length;
    }
    length += (current.length > 0 ? separator(unit).length : 0) + unit.text.length;
    current.push(unit);
  }
  emit();
  return chunks;
}

const separator = (sentence: Sentence) => (sentence.opensParagraph ? '\n\n' : ' ');

function joinSentences(sentences: Sentence[]): string {
  return sentences.map((s, i) => (i === 0 ? s.text : `${separator(s)}${s.text}`)).join('');
}

/** The last whole sentences of `sentences` within `budget` characters, never all of them. */
function overlapTail(sentences: Sentence[], budget: number): Sentence[] {
  let [start, length] = [sentences.length, 0];
  while (start > 1) {
    const [candidate, after] = [sentences[start - 1]?.text ?? '', sentences[start]];
    const grown = candidate.length + (after ? separator(after).length + length : 0);
    if (grown > budget) break;
    [start, length] = [start - 1, grown];
  }
  return sentences.slice(start);
}

/** Headings and sentences of one page, in reading order. */
function pageUnits(page: ExtractedPage, running: Set<string>, target: number): Unit[] {
  const units: Unit[] = [];
  const lines = pageLines(page.text, running);
  let run: { start: number; end: number } | null = null;
  const flush = () => {
    const sentences = run ? sentencesOf(page, run.start, run.end, target) : [];
    for (const sentence of sentences) units.push(sentence); // push(...) overflows on huge texts
    run = null;
  };
  let afterHeading = false;
  lines.forEach((line, i) => {
    const previous = lines[i - 1]?.text ?? '';
    if (isBlank(line.text)) {
      flush();
      return;
    }
    // A heading opens a block or follows a heading or a sentence's end (a colon leads into a list).
    const mayHead = isBlank(previous) || afterHeading || /[.!?]\s*$/.test(previous);
    const alone = mayHead && isBlank(lines[i + 1]?.text ?? '');
    const heading = headingOf(line.text, mayHead, alone);
    afterHeading = heading !== null;
    if (heading === null) {
      run = { start: run?.start ?? line.offset, end: line.offset + line.text.length };
      return;
    }
    flush();
    units.push({ heading });
  });
  flush();
  return units;
}

interface PageLine {
  text: string;
  offset: number;
}

/** The page's lines with their offsets; running headers and footers are blanked out. */
function pageLines(text: string, running: Set<string>): PageLine[] {
  const lines: PageLine[] = [];
  let offset = 0;
  for (const line of text.split('\n')) {
    lines.push({ text: line, offset });
    offset += line.length + 1;
  }
  for (const line of edgeLines(lines)) {
    if (running.has(lineKey(line.text) ?? '')) line.text = '';
  }
  return lines;
}

// Words that stay lower case inside a Title Case heading.
const MINOR_WORDS = new Set(
  'a an and as at by for from in into of on or per the to via vs with without'.split(' '),
);

/**
 * The heading a line is, or null. Markdown headings count anywhere; numbered, ALL CAPS and Title
 * Case lines only where a heading can start; a short sentence-case line only alone in its block.
 */
function headingOf(line: string, mayHead: boolean, alone: boolean): string | null {
  if (line.length > 200) return null; // before any work on what may be a whole text file
  const text = line.replace(/\s+/g, ' ').trim();
  const markdown = /^#{1,6} (.+?)(?: #+)?$/.exec(text);
  if (markdown?.[1]) return markdown[1];
  if (/^[-*•▪◦·] /.test(text)) return null; // a list item
  // A heading ends in a letter, digit or closing bracket: not in punctuation or a hyphen.
  if (!mayHead || text.length > 80 || !/[\p{L}\p{N})\]"'”’]$/u.test(text)) return null;
  const words = text.split(' ');
  if (words.length > 12) return null;
  if (/^\d+(?:\.\d+)+\.? \p{Lu}/u.test(text)) return text; // 2.1 Management of ...
  const body = /^(?:\d{1,2}|[IVX]{1,4}|[A-Z])[.)]? (.*)$/.exec(text)?.[1] ?? text;
  if (isAllCaps(body) || isTitleCase(body)) return text;
  return alone && words.length <= 8 && /^\p{Lu}/u.test(body) ? text : null;
}

function isAllCaps(text: string): boolean {
  const letters = text.replace(/[^\p{L}]/gu, '');
  return letters.length >= 2 && letters === letters.toUpperCase() && /\p{Lu}/u.test(letters);
}

function isTitleCase(text: string): boolean {
  const words = text.split(' ').filter((w) => /\p{L}/u.test(w));
  return (
    words.length > 0 &&
    /^\p{Lu}/u.test(words[0] ?? '') &&
    words.every((w) => MINOR_WORDS.has(w) || !/^\p{Ll}/u.test(w))
  );
}

/**
 * Short lines (digits ignored) opening or closing 60% of the pages, and at least three: running
 * headers, footers and page numbers, which would pose as headings and repeat in chunks.
 */
function runningLines(pages: readonly ExtractedPage[]): Set<string> {
  const counts = new Map<string, number>();
  for (const page of pages) {
    const lines = pageLines(page.text, new Set());
    const keys = new Set(edgeLines(lines).map((line) => lineKey(line.text)));
    for (const key of keys) if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const threshold = Math.max(3, 0.6 * pages.length);
  return new Set([...counts].filter(([, count]) => count >= threshold).map(([key]) => key));
}

function edgeLines(lines: PageLine[]): PageLine[] {
  const filled = lines.filter((line) => !isBlank(line.text));
  return [filled[0], filled.at(-1)].filter((line) => line !== undefined);
}

/** Digits and spacing ignored; only for short lines (a whole text file may be one line). */
const lineKey = (line: string) =>
  line.length > 100 ? undefined : line.replace(/\d+/g, '#').replace(/\s+/g, ' ').trim();

const isBlank = (line: string) => !/\S/.test(line);
