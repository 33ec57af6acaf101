import { LRUCache } from 'lru-cache';
import type { GlossaryEntry, Passage } from './types.js';
import {
  acronymsSpelled,
  groupIn,
  questionGroups,
  sentenceKey,
  sentencesIn,
  stems,
  termsOf,
  truncatedTo,
  type TermGroup,
} from './extractive-text.js';
import { askedKinds, statedKinds, withoutCueWords } from './extractive-kind.js';
import { definitionsIn, type Definition } from '../../modules/knowledge/definitions.js';

/**
 * Scoring the passages' sentences against a question. A sentence's score is the share of the
 * question's term weight it holds (words found only next to it, in the sentences around it or in
 * its passage's heading and title, count in part), blended with its passage's retrieval score.
 * A question word weighs by its inverse document frequency over the passages' sentences, raised
 * to a power (1: plain idf; 0, chosen on dev: all alike, since over a handful of passages on one
 * topic idf makes an incidental word such as "count" outweigh the topic itself). A word that no
 * sentence holds at all weighs more (a number excepted): it is most often the very subject of a
 * question the knowledge base does not cover.
 *
 * Last, the score is scaled by the retrieval's focus: the share of the passages that come from the
 * sentence's document. When the knowledge base covers a question, retrieval converges on the
 * document that treats it; when it does not, the hits scatter over documents that merely share a
 * word or two with it ("first-line", "vaccine"). This assumes documents of several chunks each, as
 * guidelines are, and a turn retrieving several passages (eval/answers.ts measures with 8).
 */

export interface ScoreTuning {
  /** Weight of the passage's retrieval score in a sentence's score (the rest: term coverage). */
  retrievalWeight: number;
  /** Credit for a question word found next to a sentence (neighbours, heading, title). */
  contextWeight: number;
  /** Exponent of the idf weights: 0 weighs all question words alike. */
  idfPower: number;
  /** Factor on the weight of a question word that no sentence holds and that names a topic. */
  absentWeight: number;
  /** The same for an absent ordinary word (a lay rewording, most often): see extractive-topic.ts. */
  plainAbsentWeight: number;
  /** The same for an absent word of everyday English (`TermGroup.everyday`). */
  everydayAbsentWeight: number;
  /** How much the share of passages from the sentence's own document counts (see `focusOf`). */
  focusWeight: number;
  /**
   * Weight, next to a question word's, of each kind of statement the question asks for (a value,
   * a duration, a reason, ...: extractive-kind.ts) that a sentence makes.
   */
  kindWeight: number;
}

/** A sentence of a passage, scored. */
export interface Quote {
  text: string;
  passage: Passage;
  /** Position of the sentence in its passage. */
  index: number;
  /** 0..1: what sentences are ranked by. */
  score: number;
  /**
   * The score without the answer-kind factor: how well the sentence covers the question's words,
   * which is what the refusal threshold is compared with (the kind says which sentence answers,
   * not whether the knowledge base covers the question at all).
   */
  support: number;
}

interface Candidate {
  text: string;
  passage: Passage;
  index: number;
  terms: ReadonlySet<string>;
  /** The terms of its neighbours and of its passage's heading and title. */
  near: ReadonlySet<string>;
}

/**
 * A passage's sentences as the scoring reads them: the text of each, its comparison key and words,
 * and its terms. The same chunks come back turn after turn (a topic's passages, and the same
 * sentences from overlapping chunks), and splitting and analysing them was most of the model's
 * time (2.1 of 2.4 ms an answer over 8 passages of the bench corpus): kept for the passages
 * analysed lately, by their text. Never changed once made.
 */
interface AnalysedPassage {
  /** The abbreviations and pairs of names the passage defines ("latent TB infection (LTBI)"). */
  definitions: readonly Definition[];
  texts: readonly string[];
  keys: readonly string[];
  words: readonly ReadonlySet<string>[];
  terms: readonly ReadonlySet<string>[];
}

const analysedPassages = new LRUCache<string, AnalysedPassage>({ max: 2_000 });

function analysedPassage(text: string): AnalysedPassage {
  let analysed = analysedPassages.get(text);
  if (analysed === undefined) {
    const texts = sentencesIn(text);
    const keys = texts.map(sentenceKey);
    analysed = {
      definitions: definitionsIn(text),
      texts,
      keys,
      words: keys.map((key) => new Set(key.split(' '))),
      terms: texts.map(termsOf),
    };
    analysedPassages.set(text, analysed);
  }
  return analysed;
}

/**
 * The sentences kept so far, to drop the same sentence from two overlapping chunks, or one cut
 * differently: one contains the other, or they share nine words in ten. Each kept sentence's
 * words are indexed, so that a new one counts the words it shares with every kept one in one pass
 * over its own words, and the containment test (a string search) runs only where the shared words
 * allow it: a key inside another has all its words but the first and last (which may be cut) among
 * the other's words.
 */
class KeptSentences {
  private readonly kept: { key: string; size: number }[] = [];
  private readonly byWord = new Map<string, number[]>();

  /** Keeps the sentence unless it is a near-duplicate of one kept; says whether it was kept. */
  keep(key: string, words: ReadonlySet<string>): boolean {
    const shared = new Array<number>(this.kept.length).fill(0);
    for (const w of words)
      for (const i of this.byWord.get(w) ?? []) shared[i] = (shared[i] ?? 0) + 1;
    for (const [i, other] of this.kept.entries()) {
      const both = shared[i] ?? 0;
      if (other.key.length >= key.length && both >= words.size - 2 && other.key.includes(key)) {
        return false;
      }
      if (key.length >= other.key.length && both >= other.size - 2 && key.includes(other.key)) {
        return false;
      }
      if (both / (other.size + words.size - both) >= 0.9) return false;
    }
    const at = this.kept.length;
    this.kept.push({ key, size: words.size });
    for (const w of words) {
      const holders = this.byWord.get(w);
      if (holders === undefined) this.byWord.set(w, [at]);
      else holders.push(at);
    }
    return true;
  }
}

/** The question's acronyms a text spells out, added to its terms (a copy: `terms` is shared). */
function withAcronyms(terms: ReadonlySet<string>, text: string, acronyms: readonly string[]) {
  const spelled = acronymsSpelled(text, acronyms);
  return spelled.length === 0 ? terms : new Set([...terms, ...spelled]);
}

/**
 * The sentences of all passages, best-ranked passage first, near-duplicates dropped; `acronyms`
 * (of the question) count as terms of the sentences that spell them out.
 */
function candidates(passages: readonly Passage[], acronyms: readonly string[]): Candidate[] {
  const ranked = [...passages].sort((a, b) => b.score - a.score || a.n - b.n);
  // Two letters ("KD") are spelled by too many pairs of words in running text; a title or a
  // heading ("Kawasaki Disease") is short enough to trust.
  const spelledInText = acronyms.filter((a) => a.length >= 3);
  const kept: Candidate[] = [];
  const seen = new KeptSentences();
  for (const passage of ranked) {
    const analysed = analysedPassage(passage.text);
    const terms = analysed.texts.map((text, i) =>
      withAcronyms(analysed.terms[i] ?? new Set(), text, spelledInText),
    );
    const labelText = `${passage.title}. ${passage.heading ?? ''}`;
    const label = withAcronyms(termsOf(labelText), labelText, acronyms);
    analysed.texts.forEach((text, index) => {
      const key = analysed.keys[index] ?? '';
      const words = analysed.words[index] ?? new Set<string>();
      if (!seen.keep(key, words)) return;
      const near = new Set([...label, ...(terms[index - 1] ?? []), ...(terms[index + 1] ?? [])]);
      kept.push({ text, passage, index, terms: terms[index] ?? new Set(), near });
    });
  }
  return kept;
}

/**
 * The question's words that no sentence holds, as written, matched with the passages' longer
 * terms they begin ("toxo" with toxoplasmosis, "doxy" with doxycycline): a clinician's shortening
 * of a name the passages spell out.
 */
function withTruncations(groups: readonly TermGroup[], all: readonly Candidate[]): TermGroup[] {
  let vocabulary: Map<string, number> | undefined;
  return groups.map((g) => {
    if (g.truncation === undefined || all.some((c) => groupIn(c.terms, g) || groupIn(c.near, g))) {
      return g;
    }
    if (vocabulary === undefined) {
      vocabulary = new Map();
      for (const c of all) for (const t of c.terms) vocabulary.set(t, (vocabulary.get(t) ?? 0) + 1);
    }
    const longer = truncatedTo(g.truncation, vocabulary);
    if (longer.length === 0) return g;
    return { ...g, alternatives: [...g.alternatives, ...longer.map((t) => [t])] };
  });
}

/**
 * The question's words that the question itself, one of the passages or the knowledge base's
 * glossary defines ("LTBI" where a passage writes "latent TB infection (LTBI)", "Vyvanse" where
 * one writes "VYVANSE (lisdexamfetamine dimesylate)", "Intuniv" where the question writes
 * "guanfacine (Intuniv)"), with the other form as an alternative: the passages may write only
 * that one.
 */
function withDefinitions(
  question: string,
  groups: readonly TermGroup[],
  passages: readonly Passage[],
  glossary: readonly GlossaryEntry[],
): TermGroup[] {
  const other = new Map<string, string[]>();
  const add = (written: string, form: string) => {
    const key = written.toLowerCase();
    other.set(key, [...(other.get(key) ?? []), form]);
  };
  const definitions = [
    // The question's own: "guanfacine (Intuniv)" says the passages' guanfacine is its Intuniv.
    ...definitionsIn(question),
    ...passages.flatMap((p) => analysedPassage(p.text).definitions),
    ...glossary.map((e) => ({ short: e.term, long: e.means, kind: e.kind })),
  ];
  for (const d of definitions) {
    if (d.kind === 'abbreviation') {
      add(d.short, d.long);
      continue;
    }
    // A generic name without its salt: "lisdexamfetamine" names what "lisdexamfetamine
    // dimesylate" does, and passages write it so.
    const generic = d.long.split(/\s+/)[0] ?? d.long;
    add(d.short, generic);
    add(d.long, d.short);
    add(generic, d.short);
  }
  if (other.size === 0) return [...groups];
  return groups.map((g) => {
    const forms = (other.get(g.written) ?? []).map(stems).filter((a) => a.length > 0);
    return forms.length === 0 ? g : { ...g, alternatives: [...g.alternatives, ...forms] };
  });
}

/** Each question word's weight (see the module comment). */
function weights(groups: readonly TermGroup[], all: readonly Candidate[], tuning: ScoreTuning) {
  const n = all.length;
  return groups.map((g) => {
    const df = all.filter((c) => groupIn(c.terms, g)).length;
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5)) ** tuning.idfPower;
    if (df > 0 || g.value) return idf;
    if (g.topic) return idf * tuning.absentWeight;
    return idf * (g.everyday ? tuning.everydayAbsentWeight : tuning.plainAbsentWeight);
  });
}

/** Per document: 1 - weight + weight x the share of the passages that come from it. */
function focusOf(passages: readonly Passage[], weight: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (const p of passages) counts.set(p.documentId, (counts.get(p.documentId) ?? 0) + 1);
  const factor = new Map<string, number>();
  for (const [id, count] of counts) factor.set(id, 1 - weight + (weight * count) / passages.length);
  return factor;
}

/** The sentences scored, and the question's specialist words none of them is near. */
export interface Scored {
  quotes: Quote[];
  /**
   * The question's names of a topic that are words of the field ("spiramycin", "Coumadin": both
   * `TermGroup.topic` and `TermGroup.specialist`) that no sentence holds nor is next to, in any of
   * the forms the model reads (truncations, acronyms spelled out). A specialist word alone is
   * not enough: "stent", "nebs" or "hypercapnic" are as often the question's own wording of what
   * a passage says otherwise (measured on eval/answers.json's tuning split: 4 facts lost).
   */
  unheld: string[];
}

/** Every sentence of the passages, scored; 0 for one holding no question word itself. */
export function scoreSentences(
  question: string,
  passages: readonly Passage[],
  tuning: ScoreTuning,
  glossary: readonly GlossaryEntry[] = [],
): Scored {
  const asked = questionGroups(withoutCueWords(question));
  if (asked.length === 0) return { quotes: [], unheld: [] };
  const kinds = askedKinds(question);
  const all = candidates(
    passages,
    asked.flatMap((g) => (g.acronym === undefined ? [] : [g.acronym])),
  );
  const groups = withTruncations(withDefinitions(question, asked, passages, glossary), all);
  const w = weights(groups, all, tuning);
  const total = w.reduce((a, b) => a + b, 0);
  const focus = focusOf(passages, tuning.focusWeight);
  const k = tuning.kindWeight;
  const kindFactor = (text: string) =>
    kinds.length === 0 ? 1 : (1 + (k * statedKinds(text, kinds).length) / kinds.length) / (1 + k);
  const quotes = all.map((c) => {
    let own = 0;
    let near = 0;
    groups.forEach((g, i) => {
      if (groupIn(c.terms, g)) own += w[i] ?? 0;
      else if (groupIn(c.near, g)) near += w[i] ?? 0;
    });
    const coverage = (own + tuning.contextWeight * near) / total;
    const r = tuning.retrievalWeight;
    const blended = (1 - r) * coverage + r * c.passage.score;
    const support = own === 0 ? 0 : blended * (focus.get(c.passage.documentId) ?? 1);
    const score = support * kindFactor(c.text);
    return { text: c.text, passage: c.passage, index: c.index, score, support };
  });
  const unheld = groups
    .filter((g) => g.specialist && g.topic && !g.value)
    .filter((g) => !all.some((c) => groupIn(c.terms, g) || groupIn(c.near, g)))
    .map((g) => g.word);
  return { quotes, unheld };
}
