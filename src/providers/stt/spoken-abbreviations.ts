import { numberWords } from './spoken-numbers.js';

/**
 * Abbreviations as clinicians say them: most letter by letter ("eGFR" -> e g f r, in the
 * dictionary's single-letter words), some as words ("ACE inhibitor" -> ace inhibitor, "CURB65" ->
 * curb sixty five, "CHA2DS2-VASc" -> chads two vasc).
 */

/** Said as words, whatever the dictionary holds. Keys upper case. */
const SAID_AS_WORDS: Readonly<Record<string, string>> = {
  ACE: 'ace',
  AIR: 'air',
  BLED: 'bled',
  CHA2DS2: 'chads two',
  COVID: 'covid',
  CURB: 'curb',
  EPI: 'epi',
  HAS: 'has',
  NSTEMI: 'n stemi',
  STEMI: 'stemi',
  VASC: 'vasc',
};

/** Roman numerals, as in "angiotensin II" or "glycoprotein IIb/IIIa". Exact case. */
const ROMAN: Readonly<Record<string, string>> = {
  II: 'two',
  III: 'three',
  IIb: 'two b',
  IIIa: 'three a',
};

/**
 * All-capital words of up to three letters that are ordinary words in a heading set in capitals
 * ("SIGNS OF SEPSIS"), not abbreviations.
 */
const CAPITALISED_WORDS = new Set(
  'A AN AND ARE AS AT BE BUT BY CAN DO FOR HOW IF IN IS IT ITS MAY NO NOT OF ON OR THE TO USE WHO WHY'.split(
    ' ',
  ),
);

const letters = (run: string) => Array.from(run.toLowerCase());

/** An abbreviation: two capitals or more ("COPD", "eGFR", "IgE"), or letters with digits ("B12"). */
export function isAbbreviation(token: string): boolean {
  if (/^\p{L}+$/u.test(token)) return (token.match(/\p{Lu}/gu)?.length ?? 0) >= 2;
  return /\p{L}/u.test(token) && /\d/.test(token);
}

/**
 * How an abbreviation is said. `isWord` tells whether a lower-case word is in the recognizer's
 * dictionary: an all-capital word of four letters or more that is ("NICE", "SOFA", "LAMA", "MART")
 * is said as that word.
 */
export function spokenAbbreviation(token: string, isWord: (word: string) => boolean): string[] {
  const roman = ROMAN[token];
  if (roman) return roman.split(' ');
  if (CAPITALISED_WORDS.has(token)) return [token.toLowerCase()];
  const whole = SAID_AS_WORDS[token.toUpperCase()];
  if (whole !== undefined) return whole.split(' ');
  const words: string[] = [];
  // Digit runs, runs of capitals, runs of small letters: "HbA1c" -> H b A 1 c, "proBNP" -> pro BNP.
  const runs = token.match(/\d+|\p{Lu}+s?(?!\p{Ll})|\p{Lu}|\p{Ll}+/gu) ?? [];
  for (const run of runs) {
    if (/^\d/.test(run)) {
      words.push(...numberWords(run));
      continue;
    }
    const said = SAID_AS_WORDS[run.toUpperCase()];
    if (said !== undefined) {
      words.push(...said.split(' '));
    } else if (/^\p{Lu}+s$/u.test(run) && run.length > 2) {
      // A plural: "DOACs" -> d o a c's, "NSAIDs" -> n s a i d's.
      const spelt = letters(run.slice(0, -1));
      words.push(...spelt.slice(0, -1), `${spelt.at(-1) ?? ''}'s`);
    } else if (
      (/^\p{Lu}{4,}$/u.test(run) || /^\p{Ll}{3,}$/u.test(run)) &&
      isWord(run.toLowerCase())
    ) {
      words.push(run.toLowerCase());
    } else {
      words.push(...letters(run));
    }
  }
  return words;
}
