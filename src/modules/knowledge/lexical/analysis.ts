import { stemmer } from 'stemmer';
import { expandAbbreviations } from '../abbreviations.js';
import { STOPWORDS, expansions, tokenize } from '../../../providers/embeddings/text.js';

/**
 * The one text analysis every in-process candidate is given, for chunks and questions alike, so
 * the comparison is of the indexes and not of their tokenizers: the service's folding and
 * tokenizing (`tokenize`: lower case, accents removed, "GLP-1" → "glp1"), its stopwords, then the
 * Porter stemmer of the `stemmer` package. The chunk text is the service's search text
 * (`searchTextOf`: title, heading and text, abbreviations expanded); a question is prepared as
 * `SearchService` prepares it for full text (abbreviations expanded, the lexicon's clinical terms
 * for lay words added), then analysed by the same function.
 */

const stems = new Map<string, string>();

function stemOf(word: string): string {
  let stem = stems.get(word);
  if (stem === undefined) {
    stem = /\d/.test(word) ? word : stemmer(word);
    stems.set(word, stem);
  }
  return stem;
}

/** The terms of a text, in order, repeated as often as they occur (term frequencies). */
export function analyse(text: string): string[] {
  const out: string[] = [];
  for (const token of tokenize(text)) {
    if (!STOPWORDS.has(token)) out.push(stemOf(token));
  }
  return out;
}

/** A question's distinct terms, prepared as the service's full-text half prepares it. */
export function queryTerms(question: string): string[] {
  const expanded = expandAbbreviations(question);
  const added = expansions(tokenize(expanded)).map((words) => words.join(' '));
  return [...new Set(analyse([expanded, ...added].join(' ')))];
}

/**
 * The question's words that may be a clinician's truncation of a longer term ("toxo", "amox"):
 * content words of four letters or more, as written in lower case, with their stems. The index
 * expands those it does not hold (`LexicalSegments.truncations`).
 */
export function truncationCandidates(question: string): { word: string; stem: string }[] {
  const found = new Map<string, string>();
  for (const token of tokenize(question)) {
    if (!STOPWORDS.has(token) && /^\p{L}{4,}$/u.test(token)) found.set(token, stemOf(token));
  }
  return [...found].map(([word, stem]) => ({ word, stem }));
}
