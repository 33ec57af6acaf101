import { numberWords } from '../../src/providers/stt/spoken-numbers.js';
import { werWords } from './wer.js';

/**
 * Human speech for the word-error-rate benchmark from Debian's Asterisk sound packages: one
 * speaker's recordings of a telephone system's prompts (asterisk-core-sounds-en-*) and the
 * transcript Debian ships beside them (asterisk-core-sounds-en's core-sounds-en.txt.gz, one
 * `name: text` line per recording, `;` comments). Two sets come out of it:
 *
 * - phrases: every prompt whose transcript is the words said (no `(...)` or `[...]` describing a
 *   sound, no `*` or `#` that the speaker reads as a word the transcript does not give), with 3 to
 *   25 words once normalised, outside the single-word folders (digits, letters, phonetic);
 * - numbers: numbers as the system says them, one recording per word ("one" "hundred" "twenty"
 *   "five") played back to back; the recordings come from the transcript's `digits/` entries.
 */

export interface Prompt {
  /** The recording's path under the sounds folder, without extension ("vm-intro", "digits/5"). */
  name: string;
  text: string;
}

/**
 * The transcript's entries, in its order. Lines that are not `name: text` (a name of words,
 * dashes and slashes, never `..`) are skipped.
 */
export function parseTranscript(transcript: string): Prompt[] {
  const prompts: Prompt[] = [];
  for (const line of transcript.split(/\r?\n/)) {
    if (line.startsWith(';')) continue;
    const match = /^([\w-]+(?:\/[\w-]+)*):\s+(.*\S)\s*$/.exec(line);
    if (match) prompts.push({ name: match[1]!, text: match[2]! });
  }
  return prompts;
}

/** Folders of single words or letters, and of silence. */
const WORD_FOLDERS = new Set(['digits', 'letters', 'phonetic', 'silence']);
/** A description of a sound or a note, or a symbol said as a word the transcript does not give. */
const NOT_SAID = /[()[\]*#]/;
const MIN_WORDS = 3;
/** Longer prompts are menus read out, nothing like a question said to an assistant. */
const MAX_WORDS = 25;

/** The phrases set: prompts whose transcript is what is said, with 3 to 25 words. */
const inRange = (words: number) => words >= MIN_WORDS && words <= MAX_WORDS;

export function selectPhrases(
  prompts: readonly Prompt[],
  isWord: (w: string) => boolean,
): Prompt[] {
  return prompts.filter(
    (p) =>
      !WORD_FOLDERS.has(p.name.split('/')[0]!) &&
      !NOT_SAID.test(p.text) &&
      inRange(werWords(p.text, { isWord }).length),
  );
}

/**
 * The numbers of the numbers set: doses, ages, readings and counts a clinician says. Decimals
 * are left out: the sounds have no recording of "point".
 */
export const CLINICAL_NUMBERS: readonly number[] = [
  2, 5, 8, 10, 12, 15, 18, 20, 25, 30, 37, 40, 45, 50, 60, 65, 72, 75, 80, 85, 88, 90, 95, 98, 100,
  110, 120, 125, 140, 150, 160, 180, 200, 250, 300, 400, 500, 600, 750, 1000, 1500, 2000, 2500,
  5000, 10000,
];

export interface ComposedNumber {
  /** The number as written ("125"): the reference, normalised like every other. */
  text: string;
  /** The recordings to play back to back ("digits/1", "digits/hundred", ...). */
  parts: string[];
}

/**
 * `n` composed from the transcript's `digits/` recordings, one per spoken word; undefined when a
 * word has no recording.
 */
export function composeNumber(n: number, prompts: readonly Prompt[]): ComposedNumber | undefined {
  const byWord = new Map<string, string>();
  for (const p of prompts) {
    if (p.name.startsWith('digits/') && /^[a-z]+$/i.test(p.text)) {
      byWord.set(p.text.toLowerCase(), p.name);
    }
  }
  const parts = numberWords(String(n)).map((word) => byWord.get(word));
  if (parts.some((p) => p === undefined)) return undefined;
  return { text: String(n), parts: parts as string[] };
}
