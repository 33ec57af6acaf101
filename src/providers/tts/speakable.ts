import {
  ABBREVIATIONS,
  SAID_AS_WORDS,
  SPELLED,
  STANDALONE_UNITS,
  UNITS,
} from './speakable-tables.js';

/**
 * Display text made fit for the ear. An answer is written for the screen: `[n]` citation markers,
 * Markdown emphasis, units and symbols. Read out verbatim, "5 mg/dL [2]" becomes "five m g slash
 * d l bracket two". This rewrites such text into words a speech engine reads naturally; digits stay
 * digits (Flite and eSpeak NG read them well), only their reading is made natural ("140/90" ->
 * "140 over 90", "1.5" -> "1 point 5", "5-10" -> "5 to 10").
 *
 * English rules apply only to English (`language` absent or `en*`); for other languages only the
 * markers and Markdown are removed.
 */
export function speakable(text: string, language?: string): string {
  let out = stripMarkup(text);
  if (language === undefined || /^en\b/i.test(language)) {
    out = english(out);
  }
  return tidy(out);
}

const ASCII_DIGITS = '0-9';
const NUMBER = `\\d+(?:[.,]\\d+)*`;

function stripMarkup(text: string): string {
  return (
    text
      // [1], [1, 2], [1-3], [1][2]: the leading space goes with them.
      .replace(/\s*\[\s*\d+(?:\s*[,;–-]\s*\d+)*\s*\]/g, '')
      // Markdown links keep their text; bare URLs are not read out.
      .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
      .replace(/\bhttps?:\/\/\S+/g, 'a link')
      .replace(/[*_`#]+/g, ' ')
      .replace(/^\s*[-•]\s+/gm, '')
  );
}

function english(text: string): string {
  let out = text.replace(
    /\/(day|week|month|year|hour|minute|dose|kg)\b/g,
    (_m, unit: string) => ` per ${unit === 'kg' ? 'kilogram' : unit}`,
  );
  out = acronyms(out);
  for (const [pattern, words] of ABBREVIATIONS) out = out.replace(pattern, words);
  out = comparators(out);
  // Blood pressure: 140/90 (two or three digits each side).
  out = out.replace(/\b(\d{2,3})\s?\/\s?(\d{2,3})\b(?!\s?\/|\.\d)/g, '$1 over $2');
  // Ranges: 5-10, 5–10, 5 - 10 (not a minus sign before a lone number).
  out = out.replace(new RegExp(`(${NUMBER})\\s?[-–—]\\s?(?=\\d)`, 'g'), '$1 to ');
  out = multipliers(out);
  out = units(out);
  out = numbers(out);
  return out.replace(/\s*&\s*/g, ' and ').replace(/([A-Za-z])\/([A-Za-z])/g, '$1 or $2');
}

const ACRONYM_TABLE: Record<string, string> = { ...SAID_AS_WORDS, ...SPELLED };
/** Each acronym's pattern and how it is said; longest first, so that "COVID-19" wins over "COVID". */
const ACRONYMS: [RegExp, string][] = Object.keys(ACRONYM_TABLE)
  .sort((a, b) => b.length - a.length)
  .map((key) => [
    new RegExp(`(?<![\\w-])${escape(key)}(s?)(?![\\w-])`, 'g'),
    ACRONYM_TABLE[key] ?? key,
  ]);

function acronyms(text: string): string {
  let out = text;
  for (const [pattern, said] of ACRONYMS) {
    out = out.replace(pattern, (_m, plural: string) => `${said}${plural}`);
  }
  // Other capitals without a vowel cannot be said as a word: spell them (CKD, HFrEF aside).
  return out.replace(
    /\b([B-DF-HJ-NP-TV-Z]{2,5})(s?)\b/g,
    (_m, caps: string, plural: string) =>
      `${caps.split('').join(' ')}${plural === 's' ? "'s" : ''}`,
  );
}

function comparators(text: string): string {
  return text
    .replace(/\s?(?:≥|>=|=>)\s?/g, ' at least ')
    .replace(/\s?(?:≤|<=|=<)\s?/g, ' at most ')
    .replace(/\s?(?:<|&lt;)\s?(?=[\d.])/g, ' below ')
    .replace(/\s?(?:>|&gt;)\s?(?=[\d.])/g, ' above ')
    .replace(/\s?±\s?/g, ' plus or minus ')
    .replace(/(^|\s)[~≈]\s?(?=\d)/g, '$1about ');
}

function multipliers(text: string): string {
  return text
    .replace(/(?<![\w.])[x×]\s?(\d+)\b/g, 'times $1')
    .replace(/\b(\d+)\s?[x×](?![\w])/g, '$1 times')
    .replace(/(\d)\s?×\s?(?=\d)/g, '$1 times ');
}

/** Each unit after a number, and on its own where it is unambiguous, with how it is said. */
const UNIT_PATTERNS = UNITS.map(([source, one, many]) => {
  const end = source === '%' || source.startsWith('°') ? '' : '(?![\\w/])';
  return {
    afterNumber: new RegExp(`(${NUMBER})\\s?(?:${source})${end}`, 'g'),
    alone: STANDALONE_UNITS.has(source)
      ? new RegExp(`(?<![\\w/])(?:${source})${end}`, 'g')
      : undefined,
    one,
    many,
  };
});

function units(text: string): string {
  let out = text;
  for (const { afterNumber, alone, one, many } of UNIT_PATTERNS) {
    out = out.replace(afterNumber, (_m, n: string) => `${n} ${n === '1' ? one : many}`);
    if (alone !== undefined) out = out.replace(alone, many);
  }
  return out;
}

function numbers(text: string): string {
  return (
    text
      // Thousands separators: 10,000 -> 10000.
      .replace(
        /\b(\d{1,3})((?:,\d{3})+)\b(?!\.\d)/g,
        (_m, head: string, tail: string) => `${head}${tail.replace(/,/g, '')}`,
      )
      // Decimals: 1.5 -> 1 point 5, 0.25 -> 0 point 2 5.
      .replace(
        new RegExp(`(\\d+)\\.([${ASCII_DIGITS}]+)`, 'g'),
        (_m, whole: string, frac: string) => `${whole} point ${frac.split('').join(' ')}`,
      )
  );
}

function tidy(text: string): string {
  return text
    .replace(/\(\s*\)/g, '')
    .replace(/\s+/g, ' ')
    .replace(/\s+([.,;:!?)])/g, '$1')
    .replace(/([.,;:!?])\1+/g, '$1')
    .trim();
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
}

/**
 * Pieces of at most `max` characters, cut at a sentence or clause end, else at a space: one
 * engine run (or request) each, so a very long sentence is spoken in bounded steps.
 */
export function splitForSpeech(text: string, max: number): string[] {
  const pieces: string[] = [];
  let rest = text.trim();
  while (rest.length > max) {
    const window = rest.slice(0, max + 1);
    const cut =
      lastMatch(window, /[.!?;:](?=\s)/g) ??
      lastMatch(window, /,(?=\s)/g) ??
      window.lastIndexOf(' ');
    const at = cut > max / 3 ? cut + 1 : max;
    pieces.push(rest.slice(0, at).trim());
    rest = rest.slice(at).trim();
  }
  if (rest !== '') pieces.push(rest);
  return pieces.filter((piece) => /[\p{L}\p{N}]/u.test(piece));
}

function lastMatch(text: string, pattern: RegExp): number | undefined {
  let last: number | undefined;
  for (const match of text.matchAll(pattern)) last = match.index;
  return last;
}
