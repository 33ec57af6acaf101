import { integerWords } from '../stt/spoken-numbers.js';
import { speakable } from './speakable.js';

/**
 * The words a speech engine says for a display text: `speakable` (markers dropped, units,
 * acronyms and ranges in words), then numbers read the way Flite, the default English engine,
 * reads a number on its own ("500" -> "five hundred", "1999" -> "nineteen ninety nine", "07" ->
 * "zero seven"). The voice pipeline places the words of a sentence in its audio by these (each
 * spoken word an equal share), so what is stored of an interrupted answer is cut by what was said,
 * not by what is displayed. Other engines read numbers nearly alike (eSpeak NG adds "and" after
 * "hundred"); for languages other than English a number counts as one word.
 */
export function spokenWords(text: string, language?: string): string[] {
  const english = language === undefined || /^en\b/i.test(language);
  const words: string[] = [];
  for (const token of speakable(text, language).match(/[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*/gu) ?? []) {
    // "SGLT2", "ng28": letters and digits are said apart.
    for (const part of token.match(/\p{N}+|[^\p{N}]+/gu) ?? []) {
      if (english && /^[0-9]+$/.test(part)) words.push(...numberWords(part));
      else words.push(part);
    }
  }
  return words;
}

/** A string of ASCII digits in words, as Flite reads it standing alone. */
export function numberWords(digits: string): string[] {
  // A leading zero, or too long to be a quantity: digit by digit.
  if ((digits.length > 1 && digits.startsWith('0')) || digits.length > 12) {
    return Array.from(digits, (d) => integerWords(Number(d))).flat();
  }
  const n = Number(digits);
  if (digits.length === 4 && n >= 1800 && n <= 2999 && !(n >= 2000 && n <= 2009)) {
    // Read as a year: 1999 "nineteen ninety nine", 1900 "nineteen hundred", 1909 "nineteen oh nine".
    const low = n % 100;
    const tail =
      low === 0 ? ['hundred'] : low < 10 ? ['oh', ...integerWords(low)] : integerWords(low);
    return [...integerWords(Math.floor(n / 100)), ...tail];
  }
  return integerWords(n);
}
