import { SYNONYMS } from './lexicon.js';

/**
 * Text analysis for the hashed embedder: folding, tokenising, lexicon expansion and a light
 * stemmer. Kept apart from the hashing so each step can be tested on words, not on vectors.
 */

/** Lower-case, accents removed ("œdème" → "oedeme"), so spelling variants share features. */
export function fold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/œ/g, 'oe')
    .replace(/æ/g, 'ae');
}

/** Words of folded text; "GLP-1", "SGLT-2" become "glp1", "sglt2" as the lexicon writes them. */
export function tokenize(text: string): string[] {
  const joined = fold(text).replace(/([a-z])-(\d)\b/g, '$1$2');
  return joined.match(/[a-z0-9]+/g) ?? [];
}

/** Words too common to say what a passage is about; dropped before hashing. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before ' +
    'being below between both but by can could did do does doing down during each either few for ' +
    'from further had has have having he her here hers him his how i if in into is it its itself ' +
    'just me more most my no nor not now of off on once only or other our out over own per same ' +
    'she should so some such than that the their them then there these they this those through ' +
    'to too under until up very was we were what when where which while who whom why will with ' +
    'would you your yours may might must shall use used using usually often within without whether ' +
    'every someone something anyone get gets got one ones thing things way ways'
  ).split(' '),
);

interface Phrase {
  words: readonly string[];
  expansion: readonly string[];
}

/** Lexicon entries indexed by their first word, longest phrase first, so matching is cheap. */
function indexPhrases(): ReadonlyMap<string, readonly Phrase[]> {
  const byFirst = new Map<string, Phrase[]>();
  for (const [key, value] of Object.entries(SYNONYMS)) {
    const words = key.split(' ');
    const first = words[0];
    if (first === undefined) continue;
    const list = byFirst.get(first) ?? [];
    list.push({ words, expansion: value.split(' ') });
    byFirst.set(first, list);
  }
  for (const list of byFirst.values()) list.sort((a, b) => b.words.length - a.words.length);
  return byFirst;
}

const PHRASES = indexPhrases();

function matchesAt(tokens: readonly string[], start: number, words: readonly string[]): boolean {
  for (let i = 0; i < words.length; i += 1) {
    if (tokens[start + i] !== words[i]) return false;
  }
  return true;
}

/**
 * The expansions the lexicon adds to a token sequence, one segment per match. They are returned
 * apart from the original words so that word pairs are never formed across a seam.
 */
export function expansions(tokens: readonly string[]): string[][] {
  const added: string[][] = [];
  for (let i = 0; i < tokens.length; i += 1) {
    const candidates = PHRASES.get(tokens[i] ?? '');
    if (candidates === undefined) continue;
    const hit = candidates.find((p) => matchesAt(tokens, i, p.words));
    if (hit !== undefined) added.push([...hit.expansion]);
  }
  return added;
}

// Longest first; a suffix is removed only if at least four letters remain, so short clinical
// words ("renal", "dose") are left alone and the char n-grams carry their morphology instead.
const SUFFIXES = (
  'isations izations ications isation ization ication ational ations nesses ements ation ities ' +
  'ively ments ement ness ings ions ives ants ents ance ence ally ical ised ized ises izes ity ive ' +
  'ion ing ant ent ies ied ary ory ous ise ize ism ist ic al ed es ly er e s'
).split(' ');

/** A light suffix stripper: "hypertensive" and "hypertension" both give "hypertens". */
export function stem(word: string): string {
  if (word.length <= 4 || /\d/.test(word)) return word;
  for (const suffix of SUFFIXES) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 4) {
      return word.slice(0, word.length - suffix.length);
    }
  }
  return word;
}

/**
 * The words of a text in segments (the text itself, then each lexicon expansion), stopwords
 * removed. Hashing features are built per segment.
 */
export function analyse(text: string): string[][] {
  const tokens = tokenize(text);
  const segments = [tokens, ...expansions(tokens)];
  return segments.map((segment) => segment.filter((w) => !STOPWORDS.has(w)));
}
