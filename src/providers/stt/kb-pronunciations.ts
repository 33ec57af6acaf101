import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Pronunciations for the knowledge base's words that the recognizer's dictionary lacks
 * ("metformin", "atrial", "creatinine", "nephrologist"): a language model can only raise the
 * chance of words the decoder can say, and these are the words a clinical question turns on.
 * Flite's letter-to-sound rules (`t2p`, from the Debian package `flite` the TTS already needs)
 * guess each one; the guesses become dictionary lines in the CMU phone set of PocketSphinx's en-us
 * acoustic model.
 */

/** The phones of the en-us acoustic model (cmudict-en-us.dict's phone set). */
const PHONES = new Set(
  'AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG OW OY P R S SH T TH UH UW V W Y Z ZH'.split(
    ' ',
  ),
);
/** Flite's phones outside that set. */
const FLITE_TO_CMU: Readonly<Record<string, string>> = { AX: 'AH', AXR: 'ER' };

/** t2p's output ("pau m eh1 t f ao1 r m ih n pau") as dictionary phones, undefined if unusable. */
export function phonesFromFlite(output: string): string | undefined {
  const phones = output
    .trim()
    .split(/\s+/)
    .filter((p) => p !== '' && p !== 'pau')
    .map((p) => p.replace(/\d$/, '').toUpperCase())
    .map((p) => FLITE_TO_CMU[p] ?? p);
  return phones.length > 0 && phones.every((p) => PHONES.has(p)) ? phones.join(' ') : undefined;
}

const run = promisify(execFile);

/**
 * `guess`'s pronunciations of `words` (lower-case letters and apostrophes only; others are
 * skipped), as a map from word to phones in word order; words it cannot say are left out. Runs
 * `concurrency` guesses at a time.
 */
export async function guessPronunciations(
  words: Iterable<string>,
  guess: (word: string) => Promise<string | undefined>,
  concurrency = 4,
): Promise<Map<string, string>> {
  const todo = [...new Set(words)].filter((w) => /^[a-z]+(?:'[a-z]+)?$/.test(w)).sort();
  const found = new Map<string, string>();
  let next = 0;
  const worker = async () => {
    while (next < todo.length) {
      const word = todo[next++] ?? '';
      const phones = await guess(word);
      if (phones !== undefined) found.set(word, phones);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return new Map([...found].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
}

/** Flite's guesses for `words` (see guessPronunciations): `t2p` once per word. */
export async function flitePronunciations(
  words: Iterable<string>,
  options: { t2p?: string; concurrency?: number } = {},
): Promise<Map<string, string>> {
  const guess = async (word: string) =>
    phonesFromFlite((await run(options.t2p ?? 't2p', [word])).stdout);
  return guessPronunciations(words, guess, options.concurrency);
}

/** Dictionary lines ("word PH O NES"), in the map's order. */
export function dictionaryLines(pronunciations: ReadonlyMap<string, string>): string {
  return [...pronunciations].map(([word, phones]) => `${word} ${phones}\n`).join('');
}
