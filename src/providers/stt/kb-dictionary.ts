import { readFile } from 'node:fs/promises';

/**
 * The words a PocketSphinx dictionary can say: its first column, without the "(2)" of alternative
 * pronunciations. A language model word outside them is a word the decoder can never output.
 */

/** The dictionary of Debian's pocketsphinx-en-us package. */
export const EN_US_DICTIONARY = '/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict';

export function parseDictionaryWords(text: string): Set<string> {
  const words = new Set<string>();
  for (const line of text.split('\n')) {
    const end = line.search(/[\s(]/);
    const word = end < 0 ? line : line.slice(0, end);
    if (word !== '' && !word.startsWith(';;')) words.add(word);
  }
  return words;
}

export async function readDictionaryWords(path: string = EN_US_DICTIONARY): Promise<Set<string>> {
  return parseDictionaryWords(await readFile(path, 'utf8'));
}

/** British spellings to American ones, each tried alone and then all together. */
const SPELLINGS: readonly (readonly [RegExp, string])[] = [
  [/ae/g, 'e'],
  [/oe/g, 'e'],
  [/our(?=s?$|ed$|ing$|ite)/g, 'or'],
  [/is(e|es|ed|ing|ation|ations)$/g, 'iz$1'],
  [/ys(e|es|ed|ing)$/g, 'yz$1'],
  [/tre(s?)$/g, 'ter$1'],
  [/ogue(s?)$/g, 'og$1'],
  [/ll(ed|ing)$/g, 'l$1'],
  [/ence$/g, 'ense'],
];

/**
 * The dictionary's spelling of a word: itself, or the American spelling of a British one
 * ("haemoglobin" -> hemoglobin, "litre" -> liter, "oedema" -> edema); undefined when neither is in
 * the dictionary. Answers are cached, so give each dictionary its own resolver.
 */
export function spellingResolver(
  dictionary: ReadonlySet<string>,
): (word: string) => string | undefined {
  const cache = new Map<string, string | undefined>();
  const resolve = (word: string): string | undefined => {
    if (dictionary.has(word)) return word;
    let all = word;
    for (const [pattern, replacement] of SPELLINGS) {
      const variant = word.replace(pattern, replacement);
      if (variant !== word && dictionary.has(variant)) return variant;
      all = all.replace(pattern, replacement);
    }
    return dictionary.has(all) ? all : undefined;
  };
  return (word) => {
    if (cache.has(word)) return cache.get(word);
    const found = resolve(word);
    // Bounded: a knowledge base has a few hundred thousand distinct words at most worth caching.
    if (cache.size < 500_000) cache.set(word, found);
    return found;
  };
}
