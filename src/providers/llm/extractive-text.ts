import { LRUCache } from 'lru-cache';
import { abbreviationsIn, expandAbbreviations } from '../../modules/knowledge/abbreviations.js';
import { sentencesOf } from '../../modules/knowledge/sentences.js';
import { SYNONYMS } from '../embeddings/lexicon.js';
import { expansions, STOPWORDS, stem, tokenize } from '../embeddings/text.js';
import { looksLikeTopic } from './extractive-topic.js';
import { notNouns } from './question-pos.js';
import { isGeneralWord } from '../embeddings/general-english.js';

/**
 * Text analysis for the extractive model: a question becomes groups of alternative terms (a word,
 * its abbreviation's expansion, its lay phrase's clinical term), a passage becomes sentences with
 * their term sets. Words are folded, tokenised and stemmed as the hashed embedder does it
 * (src/providers/embeddings/text.ts), so "hypertensive" meets "hypertension".
 */

/** One alternative for a question word: matched when most of its stems are present. */
export type Alternative = readonly string[];

/** A question word with its alternatives; it counts once however many of them a sentence has. */
export interface TermGroup {
  word: string;
  /** The word as the question writes it, in lower case ("ltbi", "vyvanse"). */
  written: string;
  alternatives: readonly Alternative[];
  /** Written in capitals and not in the abbreviation list ("IVC"): maybe spelled out in a passage. */
  acronym?: string;
  /** A number ("62"): a value the question gives, not what it is about. */
  value: boolean;
  /** Looks like the name of a topic ("lithium", "Parkinson"): see extractive-topic.ts. */
  topic: boolean;
  /**
   * A word of the field rather than of everyday English ("spiramycin", "ferritin", "titer"), and
   * not an abbreviation: see `isSpecialist`.
   */
  specialist: boolean;
  /**
   * Everyday English in every part and, in the question, not a noun ("tangled", "scooping",
   * "going"): the asker's own wording of what happened, not what the question is about.
   */
  everyday: boolean;
  /**
   * The word as written, in lower case, when it is one word of four letters or more: what a
   * clinician's truncation ("toxo", "amox", "doxy") is matched with (see `truncatedTo`).
   */
  truncation?: string;
}

/**
 * Words that make a question a question but say nothing of its topic: who asks about whom
 * ("patient", "someone"), how ("quickly", "much": guidelines state a time or an amount, not the
 * question's word) and asking for a recommendation ("best", "first choice", "appropriate"), which
 * guidelines write as "offer" or "consider". Chosen on the dev questions (eval/answers.ts).
 */
const QUESTION_FILLER: ReadonlySet<string> = new Set(
  (
    'patient patients pt pts person someone people need needs ok okay ' +
    'quick quickly fast much many make makes done give gives given ' +
    'choice best appropriate option options recommended ideal ' +
    'next possible possibly altogether roughly approximately exactly ' +
    // The first half of a contraction ("shouldn't"): its "not" is an answer kind (extractive-kind.ts).
    'shouldn mustn don doesn isn aren wasn won couldn wouldn didn'
  ).split(' '),
);

// Words as written, with inner hyphens, slashes and ampersands (as abbreviations.ts reads them).
const WORD = /[\p{L}\p{N}]+(?:[-/&][\p{L}\p{N}]+)*/gu;

const isContent = (token: string) =>
  !STOPWORDS.has(token) && (token.length > 1 || /\d/.test(token));

/** The stems of a phrase's content words. */
export function stems(text: string): string[] {
  return tokenize(text).filter(isContent).map(stem);
}

/** The lexicon's phrases by their first word, each with its place in the lexicon. */
const PHRASES = new Map<string, { words: string[]; expansion: string; order: number }[]>();
Object.entries(SYNONYMS).forEach(([phrase, expansion], order) => {
  const words = phrase.split(' ');
  const first = words[0] ?? '';
  PHRASES.set(first, [...(PHRASES.get(first) ?? []), { words, expansion, order }]);
});

/**
 * The lexicon's phrases found in `tokens`, with the positions they cover, in the lexicon's order
 * (then by position). Only the phrases starting with a token are tried at it.
 */
function layPhrases(tokens: readonly string[]) {
  const found: { start: number; end: number; expansion: string; order: number }[] = [];
  tokens.forEach((token, start) => {
    for (const { words, expansion, order } of PHRASES.get(token) ?? []) {
      const end = start + words.length;
      if (end <= tokens.length && words.every((w, i) => tokens[start + i] === w)) {
        found.push({ start, end, expansion, order });
      }
    }
  });
  return found.sort((a, b) => a.order - b.order || a.start - b.start);
}

interface WrittenWord {
  written: string;
  tokens: string[];
  /** Position of its first token among the question's tokens. */
  from: number;
  abbreviations: readonly string[];
}

/** The question's words as written, with their tokens and their abbreviations' expansions. */
function writtenWords(question: string): { written: WrittenWord[]; tokens: string[] } {
  const expanded = new Map<string, readonly string[]>();
  for (const match of abbreviationsIn(question)) {
    expanded.set(match.abbreviation.toLowerCase(), match.expansions);
  }
  const tokens: string[] = [];
  const written: WrittenWord[] = [];
  for (const [word] of question.matchAll(WORD)) {
    const own = tokenize(word);
    const abbreviations = expanded.get(word.toLowerCase()) ?? [];
    written.push({ written: word, tokens: own, from: tokens.length, abbreviations });
    tokens.push(...own);
  }
  return { written, tokens };
}

/**
 * The question's term groups, one per written content word ("first-line" is one): its stems, its
 * abbreviation's expansions ("AF": atrial fibrillation) and the clinical terms of a lay phrase
 * it is part of ("blood thinner": anticoagulant). Filler words and repeated words are dropped.
 */
export function questionGroups(question: string): TermGroup[] {
  const { written, tokens } = writtenWords(question);
  const plain = notNouns(question);
  const lay = layPhrases(tokens);
  const groups = new Map<string, TermGroup>();
  for (const w of written) {
    const content = w.tokens.filter((t) => isContent(t) && !QUESTION_FILLER.has(t)).map(stem);
    if (content.length === 0) continue;
    const to = w.from + w.tokens.length;
    const phrases = lay.filter((p) => p.start < to && w.from < p.end).map((p) => p.expansion);
    const others = [...w.abbreviations, ...phrases].map(stems).filter((a) => a.length > 0);
    others.push(...irregular(w.tokens));
    const word = content.join(' ');
    const previous = groups.get(word);
    const acronym = ACRONYM.test(w.written) && w.abbreviations.length === 0 ? word : undefined;
    const single = w.tokens.length === 1 && /^\p{L}{4,}$/u.test(w.tokens[0] ?? '');
    groups.set(word, {
      word,
      written: w.written.toLowerCase(),
      alternatives: [...(previous?.alternatives ?? [content]), ...others],
      ...(acronym === undefined ? {} : { acronym }),
      ...(single ? { truncation: w.tokens[0] } : {}),
      value: content.every((c) => /^\d+$/.test(c)),
      topic: (previous?.topic ?? false) || looksLikeTopic(w.written, w.from === 0),
      specialist: (previous?.specialist ?? false) || isSpecialist(w.written),
      everyday:
        (previous?.everyday ?? true) &&
        isEveryday(w.written) &&
        w.written.split(/[-/&]/).every((part) => plain.has(part.toLowerCase())),
    });
  }
  return [...groups.values()];
}

/** A part of a written word in small letters, the first maybe a capital ("Imitrex", not "IVIG"). */
const PLAIN_PART = /^\p{Lu}?\p{Ll}{4,}$/u;

/**
 * A written word that names something of the field: a part of it (of four letters or more, as
 * words are written, not an abbreviation such as "IVIG" or "tTG") outside everyday English
 * (general-english.ts): "spiramycin", "enteric-coated", "Coumadin"; not "tangled" or "half-life".
 */
export function isSpecialist(written: string): boolean {
  return written.split(/[-/&]/).some((part) => PLAIN_PART.test(part) && !isGeneralWord(part));
}

/** A part of a written word in small letters, the first maybe a capital, any length. */
const WORD_PART = /^\p{Lu}?\p{Ll}+$/u;

/**
 * A written word of everyday English in every part: a lay wording ("tangled", "scooping", "kid"),
 * not a word of the field ("titer"), an abbreviation ("GF", "tTG") or a unit ("kg").
 */
export function isEveryday(written: string): boolean {
  return written.split(/[-/&]/).every((part) => WORD_PART.test(part) && isGeneralWord(part));
}

/** Plurals the stemmer cannot reach ("woman" and "women"), both ways. */
const IRREGULAR: Readonly<Record<string, string>> = Object.fromEntries(
  [
    ['woman', 'women'],
    ['man', 'men'],
    ['child', 'children'],
    ['foot', 'feet'],
    ['tooth', 'teeth'],
    ['mouse', 'mice'],
  ].flatMap(([a, b]) => [
    [a, b],
    [b, a],
  ]),
) as Record<string, string>;

/** A word's irregular plural or singular, as an alternative of its group. */
function irregular(tokens: readonly string[]): string[][] {
  return tokens.flatMap((t) => (IRREGULAR[t] === undefined ? [] : [[stem(IRREGULAR[t])]]));
}

// Two to six capitals: "KD", "IVC", "PERC" (not "COVID-19" or "HbA1c"). Two letters spell too
// much in running text: they are matched with titles and headings only (extractive-score.ts).
const ACRONYM = /^[A-Z]{2,6}$/;

/**
 * The acronyms a text spells out: "inferior vena cava" spells "ivc". Content words only, in a
 * row, by their first letters.
 */
export function acronymsSpelled(text: string, acronyms: readonly string[]): string[] {
  if (acronyms.length === 0) return [];
  const initials = tokenize(text)
    .filter(isContent)
    .map((t) => t[0] ?? '')
    .join('');
  return acronyms.filter((a) => initials.includes(a));
}

/**
 * The stems a sentence (or a heading) holds: its own words, the expansions of its abbreviations
 * and the clinical terms of its lay phrases.
 */
export function termsOf(text: string): Set<string> {
  let stems = analysed.get(text);
  if (stems === undefined) {
    const tokens = tokenize(expandAbbreviations(text));
    const all = [...tokens, ...expansions(tokens).flat()];
    stems = [...new Set(all.filter(isContent).map(stem))];
    analysed.set(text, stems);
  }
  return new Set(stems);
}

/**
 * The stems of texts analysed lately: the same passages' sentences come back turn after turn, and
 * analysing them was a quarter of the main thread's time in a burst of 200 turns (a CPU profile).
 */
const analysed = new LRUCache<string, readonly string[]>({ max: 10_000 });

/**
 * Whether `terms` holds a question stem: the same stem, or one the light stemmer left a few
 * letters longer or shorter ("sex" and "sexual", "diabetic" and "diabetes"): up to three.
 */
function has(terms: ReadonlySet<string>, word: string): boolean {
  if (terms.has(word)) return true;
  if (word.length < 3 || /\d/.test(word)) return false;
  for (const t of terms) {
    const [short, long] = t.length < word.length ? [t, word] : [word, t];
    if (short.length >= 3 && long.length - short.length <= 3 && long.startsWith(short)) return true;
  }
  return false;
}

/** Whether `terms` holds the alternative: all its stems, or three in four of a long one. */
export function holds(terms: ReadonlySet<string>, alternative: Alternative): boolean {
  const present = alternative.filter((s) => has(terms, s)).length;
  return present >= Math.ceil(alternative.length * 0.75);
}

/**
 * The terms a truncated word stands for: the terms of `vocabulary` that begin with it, longer by
 * three letters or more ("toxo": toxoplasmosi; nearer ones are matched by `has` already), at most
 * `max` of them, the most frequent first. Clinicians shorten drug and disease names; the text
 * they ask about spells them out, so the vocabulary is the text's own.
 */
export function truncatedTo(
  prefix: string,
  vocabulary: ReadonlyMap<string, number>,
  max = 3,
): string[] {
  const found: [string, number][] = [];
  for (const [term, count] of vocabulary) {
    if (term.length >= prefix.length + 3 && term.startsWith(prefix)) found.push([term, count]);
  }
  return found
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, max)
    .map(([term]) => term);
}

export function groupIn(terms: ReadonlySet<string>, group: TermGroup): boolean {
  return group.alternatives.some((a) => holds(terms, a));
}

/** Long enough to be a statement rather than a label ("Statins:"). */
const MIN_SENTENCE_CHARS = 20;

/**
 * A passage's sentences, split by the project's sentence splitter (the one the chunker used, so
 * a chunk splits back into the sentences it was made of), each verbatim in `text`.
 */
export function sentencesIn(text: string): string[] {
  const sentences: string[] = [];
  for (const paragraph of text.split(/\n\s*\n/)) {
    const page = { page: null, text: paragraph };
    for (const s of sentencesOf(page, 0, paragraph.length, Number.MAX_SAFE_INTEGER)) {
      if (s.text.length >= MIN_SENTENCE_CHARS && text.includes(s.text)) sentences.push(s.text);
    }
  }
  return sentences;
}

/** A comparison key: lower case, words only. */
export function sentenceKey(text: string): string {
  return tokenize(text).join(' ');
}
