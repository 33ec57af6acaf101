import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { guessPronunciations } from '../../src/providers/stt/kb-pronunciations.js';

/**
 * eSpeak NG's pronunciations of words, in the CMU phone set of PocketSphinx's en-us model: the
 * benchmark's alternative to Flite's letter-to-sound rules for the knowledge base's words the
 * dictionary lacks. `espeak-ng -q --ipa -v en-us WORD` gives IPA ("mˈɛtfoːɹmˌɪn"); stress and
 * length marks go, each sound maps to a CMU phone (longest match first).
 */

/** IPA (as eSpeak NG writes American English) to CMU phones; longest keys are tried first. */
const IPA_TO_CMU: Readonly<Record<string, string>> = {
  // R-coloured vowels: eSpeak writes the r after them as well.
  ɜːɹ: 'ER',
  ɚɹ: 'ER',
  ɜː: 'ER',
  ɚ: 'ER',
  ɝ: 'ER',
  ɜ: 'ER',
  // Diphthongs and affricates.
  aɪə: 'AY ER',
  aɪ: 'AY',
  aʊ: 'AW',
  eɪ: 'EY',
  oʊ: 'OW',
  əʊ: 'OW',
  ɔɪ: 'OY',
  ɪə: 'IH AH',
  eə: 'EH R',
  ʊə: 'UH R',
  tʃ: 'CH',
  dʒ: 'JH',
  // Vowels.
  ɑː: 'AA',
  ɑ: 'AA',
  ɒ: 'AA',
  æ: 'AE',
  a: 'AE',
  ʌ: 'AH',
  ə: 'AH',
  ɐ: 'AH',
  ɔː: 'AO',
  ɔ: 'AO',
  oː: 'AO',
  o: 'OW',
  ɛ: 'EH',
  e: 'EH',
  ɪ: 'IH',
  ᵻ: 'IH',
  iː: 'IY',
  i: 'IY',
  ʊ: 'UH',
  uː: 'UW',
  u: 'UW',
  // Consonants.
  b: 'B',
  d: 'D',
  ð: 'DH',
  f: 'F',
  ɡ: 'G',
  g: 'G',
  h: 'HH',
  j: 'Y',
  k: 'K',
  x: 'K',
  l: 'L',
  ɬ: 'L',
  m: 'M',
  n: 'N',
  ŋ: 'NG',
  p: 'P',
  ɹ: 'R',
  r: 'R',
  s: 'S',
  ʃ: 'SH',
  t: 'T',
  ɾ: 'T',
  ʔ: 'T',
  θ: 'TH',
  v: 'V',
  w: 'W',
  ʍ: 'W',
  z: 'Z',
  ʒ: 'ZH',
};
const KEYS = Object.keys(IPA_TO_CMU).sort((a, b) => b.length - a.length);
/** Primary and secondary stress, syllable breaks, ties, and the half-long mark. */
const MARKS = /[ˈˌ.‿ˑ]|\u0361/g;
/** A syllabic consonant (n̩): said with a schwa before it. */
const SYLLABIC = '\u0329';

/** eSpeak NG's IPA for one word as CMU phones ("M EH T F AO R M IH N"), undefined if unusable. */
export function phonesFromIpa(ipa: string): string | undefined {
  const text = ipa.trim().normalize('NFD').replace(MARKS, '');
  if (text === '' || /\s/.test(text)) return undefined;
  const phones: string[] = [];
  let at = 0;
  while (at < text.length) {
    const key = KEYS.find((k) => text.startsWith(k, at));
    if (key === undefined) return undefined;
    at += key.length;
    if (text[at] === SYLLABIC) {
      phones.push('AH');
      at += 1;
    }
    // Length left after a vowel the table has no long form of.
    if (text[at] === 'ː') at += 1;
    phones.push(IPA_TO_CMU[key]!);
  }
  return phones.join(' ');
}

const run = promisify(execFile);

/** eSpeak NG's guesses for `words` (see guessPronunciations), in CMU phones. */
export async function espeakPronunciations(
  words: Iterable<string>,
  voice = 'en-us',
): Promise<Map<string, string>> {
  const guess = async (word: string) =>
    phonesFromIpa((await run('espeak-ng', ['-q', '--ipa', '-v', voice, word])).stdout);
  return guessPronunciations(words, guess);
}
