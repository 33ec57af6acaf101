import type { ExtractedPage } from './extract.js';

/** Cutting a page's text into sentences, for the chunker. */

export interface Sentence {
  text: string;
  page: number | null;
  offset: number;
  /** Starts a paragraph: joined to the previous sentence with a blank line instead of a space. */
  opensParagraph: boolean;
}

// Abbreviations after which a full stop does not end a sentence (compared in lower case).
const ABBREVIATIONS = new Set(
  (
    'dr drs mr mrs ms prof st vs approx ca cf al viz incl esp dept inc ltd ' +
    'mg mcg µg ug ng kg ml dl mmol mol cm mm min max hr hrs wk wks mo yr yrs ' +
    'tab tabs cap caps inj susp amp iu'
  ).split(' '),
);
// Abbreviations that do not end a sentence when a number follows: "No. 5", "Fig. 2".
const BEFORE_NUMBER = new Set('no nos fig figs vol pp p ref refs eq sec ch table'.split(' '));

// Sentence-ending punctuation, closing quotes or brackets, space, then what opens a sentence.
const SENTENCE_END = /([.!?…]+)(["'”’)\]]*)\s+(?=["'“‘([]?[\p{Lu}\p{N}])/gu;
// A line starting with a bullet or a list number starts a sentence even without punctuation.
const LIST_ITEM = /\n[ \t]*(?=[-*•▪◦·] |\d{1,2}[.)] )/g;

/** The sentences of the text between `start` and `end`, each with its offset on the page. */
export function sentencesOf(
  page: ExtractedPage,
  start: number,
  end: number,
  target: number,
): Sentence[] {
  const raw = page.text.slice(start, end);
  const cuts: [number, number][] = [];
  for (const m of raw.matchAll(SENTENCE_END)) {
    const stop = m.index + (m[1]?.length ?? 0) + (m[2]?.length ?? 0);
    if (m[1] !== '.' || !continuesAfterStop(raw, m.index, raw[m.index + m[0].length] ?? '')) {
      cuts.push([stop, m.index + m[0].length]);
    }
  }
  for (const m of raw.matchAll(LIST_ITEM)) cuts.push([m.index, m.index + m[0].length]);
  cuts.sort((p, q) => p[0] - q[0]);
  const sentences: Sentence[] = [];
  let from = 0;
  for (const [stop, next] of [...cuts, [raw.length, raw.length] as [number, number]]) {
    for (const [s, e] of splitLong(raw, from, stop, target)) {
      const text = normalise(raw.slice(s, e));
      if (text !== '') {
        const opensParagraph = sentences.length === 0;
        sentences.push({ text, page: page.page, offset: start + s, opensParagraph });
      }
    }
    from = Math.max(from, next);
  }
  return sentences;
}

/** Whether the full stop at `at` belongs to an abbreviation or a list number, not a sentence end. */
function continuesAfterStop(raw: string, at: number, nextChar: string): boolean {
  const word = /(\S+)$/.exec(raw.slice(Math.max(0, at - 40), at))?.[1] ?? '';
  if (isAbbreviation(word, nextChar)) return true;
  if (!/^\d{1,2}$/.test(word)) return false;
  // A list number opens the text, a line or a sentence, or follows a colon: "Steps: 1. Check".
  // After an abbreviation ("see Fig. 2.") the number ends the sentence.
  const before = raw.slice(Math.max(0, at - word.length - 40), at - word.length); // bounded work
  const previous = before.trimEnd();
  if (previous === '' || /\n\s*$/.test(before) || /[:;]$/.test(previous)) return true;
  return /[.!?]$/.test(previous) && !isAbbreviation(/(\S+)[.!?]$/.exec(previous)?.[1] ?? '', word);
}

/** Whether `word`, followed by a full stop and then `nextChar`, is an abbreviation. */
function isAbbreviation(word: string, nextChar: string): boolean {
  const bare = word.replace(/^[("'“‘[]+/, '').toLowerCase();
  if (/^(?:\p{L}\.)*\p{L}$/u.test(bare)) return true; // single letters: e.g. i.v. b.i.d. J. Smith
  if (ABBREVIATIONS.has(bare)) return true;
  return BEFORE_NUMBER.has(bare) && /^\d/.test(nextChar);
}

/**
 * Cuts a sentence longer than 1.5 x target into pieces of at most `target`, preferring a clause
 * boundary, then a word boundary, in the second half of each piece.
 */
function splitLong(raw: string, start: number, end: number, target: number): [number, number][] {
  const pieces: [number, number][] = [];
  let from = start;
  if (end - start > 1.5 * target) {
    while (end - from > target) {
      const window = raw.slice(from + Math.floor(target / 2), from + target);
      const clause = Math.max(...[...window.matchAll(/[;:,)–—](?=\s)/g)].map((m) => m.index + 1));
      const space = Math.max(...[' ', '\n', '\t'].map((c) => window.lastIndexOf(c)));
      const cut = clause > 0 ? clause : space > 0 ? space : window.length;
      pieces.push([from, from + Math.floor(target / 2) + cut]);
      from += Math.floor(target / 2) + cut;
    }
  }
  pieces.push([from, end]);
  return pieces;
}

function normalise(text: string): string {
  return text
    .replace(/\u00ad\s*|[\u200b-\u200d\ufeff]/g, '') // soft hyphens (with their line break)
    .replace(/(\p{L})-\n\s*(?=\p{Ll})/gu, '$1-') // a word hyphenated at a line end
    .replace(/\s+/g, ' ')
    .trim();
}
