import { isAbbreviation, spokenAbbreviation } from './spoken-abbreviations.js';
import { numberWords, ordinalWords } from './spoken-numbers.js';

/**
 * Written text as people say it, in lower-case words split into sentences: the normalisation both
 * the knowledge base's language model and the word-error-rate measurement use. Numbers become
 * words ("140/90 mmHg" -> one hundred forty over ninety millimeters of mercury), units are said in
 * full, abbreviations as clinicians say them, punctuation goes. Spelling stays as written (British
 * or American); matching it to the recognizer's dictionary is the language model's business.
 */

export interface SpokenOptions {
  /** Whether a lower-case word is in the recognizer's dictionary (see spokenAbbreviation). */
  isWord?: (word: string) => boolean;
}

/** [singular, plural]; the unit's written forms, exact case. */
const UNITS: Readonly<Record<string, readonly [string, string]>> = {
  mg: ['milligram', 'milligrams'],
  mcg: ['microgram', 'micrograms'],
  µg: ['microgram', 'micrograms'],
  g: ['gram', 'grams'],
  kg: ['kilogram', 'kilograms'],
  ml: ['milliliter', 'milliliters'],
  mL: ['milliliter', 'milliliters'],
  l: ['liter', 'liters'],
  L: ['liter', 'liters'],
  dl: ['deciliter', 'deciliters'],
  dL: ['deciliter', 'deciliters'],
  mmol: ['millimole', 'millimoles'],
  mol: ['mole', 'moles'],
  mmHg: ['millimeter of mercury', 'millimeters of mercury'],
  mm: ['millimeter', 'millimeters'],
  cm: ['centimeter', 'centimeters'],
  m: ['meter', 'meters'],
  m2: ['square meter', 'square meters'],
  min: ['minute', 'minutes'],
  mins: ['minute', 'minutes'],
  h: ['hour', 'hours'],
  hr: ['hour', 'hours'],
  hrs: ['hour', 'hours'],
};
/** Units that are no word of their own, said in full wherever they stand. */
const ALWAYS_UNITS = new Set([
  'mg',
  'mcg',
  'µg',
  'kg',
  'ml',
  'mL',
  'dl',
  'dL',
  'mmol',
  'mmHg',
  'm2',
]);

/** Applied in order to a whole line before it is split. */
const REWRITES: readonly (readonly [RegExp, string])[] = [
  [/[’‘`]/g, "'"],
  [/\be\.g\.(?!\w)/gi, ' for example '],
  [/\bi\.e\.(?!\w)/gi, ' that is '],
  [/\betc\.(?=\s|$)/gi, ' et cetera.'],
  [/\bvs\.?(?=\s)/gi, ' versus '],
  [/\bapprox\.(?=\s)/gi, ' approximately '],
  [/≥|=>/g, ' at least '],
  [/≤|=</g, ' at most '],
  [/</g, ' less than '],
  [/>/g, ' greater than '],
  [/±/g, ' plus or minus '],
  [/×/g, ' times '],
  [/&/g, ' and '],
  [/\+/g, ' plus '],
  [/=/g, ' equals '],
  [/°\s*[CF]\b|°/g, ' degrees '],
  [/(\d)\s*%/g, '$1 percent '],
  [/\b(\d+)(st|nd|rd|th)\b/gi, ' #ordinal$1 '],
  [/(\d(?:\.\d+)?)\s*\/\s*(\d)/g, '$1 over $2'],
  [/(\d)\s*[-–—]\s*(?=\d)/g, '$1 to '],
  // A number stuck to its unit: "1.73m2", "5mg".
  [/(?<![\p{L}\d.])(\d[\d,]*(?:\.\d+)?)(?=[\p{L}µ])/gu, '$1 '],
];

const SENTENCE_END = /(?<=[.!?;:])\s+|[()[\]"]|\s[-–—]\s/;
const MARKDOWN_PREFIX = /^\s*(?:#+|[-*•]|\d+[.)])\s+/;
const TOKEN =
  /#ordinal\d+|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|[\p{L}\p{N}µ]+(?:'\p{L}+)*|\//gu;

type Previous = 'one' | 'number' | 'unit' | 'per' | 'other';

interface Said {
  words: string[];
  previous: Previous;
}

function sayUnit(token: string, previous: Previous): Said | undefined {
  const unit = UNITS[token];
  if (!unit) return undefined;
  if (previous === 'one' || previous === 'per')
    return { words: unit[0].split(' '), previous: 'unit' };
  if (previous === 'number' || ALWAYS_UNITS.has(token)) {
    return { words: unit[1].split(' '), previous: 'unit' };
  }
  return undefined;
}

function sayToken(token: string, previous: Previous, isWord: (w: string) => boolean): Said {
  if (token === '/') {
    return previous === 'unit' ? { words: ['per'], previous: 'per' } : { words: [], previous };
  }
  if (token.startsWith('#ordinal')) {
    return { words: ordinalWords(Number(token.slice(8))), previous: 'other' };
  }
  if (/^\d/.test(token)) {
    const words = numberWords(token);
    return { words, previous: words.join(' ') === 'one' ? 'one' : 'number' };
  }
  const unit = sayUnit(token, previous);
  if (unit) return unit;
  if (isAbbreviation(token)) return { words: spokenAbbreviation(token, isWord), previous: 'other' };
  return { words: [token.toLowerCase()], previous: 'other' };
}

function sentenceWords(sentence: string, isWord: (w: string) => boolean): string[] {
  const words: string[] = [];
  let previous: Previous = 'other';
  for (const [token] of sentence.matchAll(TOKEN)) {
    const said = sayToken(token, previous, isWord);
    words.push(...said.words);
    previous = said.previous;
  }
  return words;
}

/** The sentences of `text`, each as the words people say; empty sentences left out. */
export function spokenSentences(text: string, options: SpokenOptions = {}): string[][] {
  const isWord = options.isWord ?? (() => false);
  const sentences: string[][] = [];
  for (const rawLine of text.split(/\r?\n/)) {
    let line = rawLine.replace(MARKDOWN_PREFIX, ' ');
    for (const [pattern, replacement] of REWRITES) line = line.replace(pattern, replacement);
    for (const part of line.split(SENTENCE_END)) {
      const words = sentenceWords(part, isWord);
      if (words.length > 0) sentences.push(words);
    }
  }
  return sentences;
}

/** The whole text as one run of spoken words, joined by single spaces. */
export function spokenText(text: string, options: SpokenOptions = {}): string {
  return spokenSentences(text, options)
    .map((words) => words.join(' '))
    .join(' ');
}
