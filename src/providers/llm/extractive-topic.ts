/**
 * Whether a question word looks like the name of a topic: a condition, a drug, a named thing. A
 * question the knowledge base does not cover is most often about a topic no passage names
 * ("lithium", "glaucoma", "Parkinson"), while an answerable one reworded in lay terms misses
 * ordinary words ("kilo", "antidote", "going"). Both are absent from every passage; only the first
 * says the topic is not covered. Told apart without any vocabulary of the corpus: a word of the
 * general clinical vocabulary of clinical-names.ts ("measles", "gout", "lithium"), a word written
 * with a capital inside the question (a proper name), or one ending as clinical names end (-itis,
 * -osis, -oma, -aemia, -ism, -pathy, ... and, for longer words, -ine, -ate, -ium, -ol as drugs and
 * chemicals do).
 */

import { CLINICAL_NAMES } from './clinical-names.js';

const CLINICAL_ENDING =
  /(?:itis|osis|oma|omas|aemia|emia|ism|isms|pathy|plasty|ectomy|axis|iasis|pox|algia|cillin|mycin|cycline|azole|pril|sartan|olol|mab|vir)$/;
/** Endings that also end ordinary words ("rate", "line"): only for words of 7 letters or more. */
const LONG_ENDING = /(?:ine|ines|ate|ates|ium|ol|one)$/;
/** A capitalised word: one capital, then small letters (not "GP", "MART" or "HbA1c"). */
const NAME = /^\p{Lu}\p{Ll}{3,}$/u;

/**
 * `written`: the word as the question writes it; `first`: whether it starts the question (where
 * any word has a capital).
 */
export function looksLikeTopic(written: string, first: boolean): boolean {
  if (!first && NAME.test(written)) return true;
  const word = written.toLowerCase();
  if (word.split(/[-/&]/).some((part) => CLINICAL_NAMES.has(part))) return true;
  if (CLINICAL_ENDING.test(word)) return true;
  return word.length >= 7 && LONG_ENDING.test(word);
}
