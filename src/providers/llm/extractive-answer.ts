import type { GlossaryEntry, Passage } from './types.js';
import { askedKinds, statesRequired } from './extractive-kind.js';
import { scoreSentences, type Quote, type ScoreTuning } from './extractive-score.js';

/** Choosing the sentences of an extractive answer from the scored sentences of the passages. */

export interface ExtractiveTuning extends ScoreTuning {
  /** Below this best-sentence score the model says it found no answer (see DEFAULT_TUNING). */
  threshold: number;
  /** A further sentence must score at least this share of the best one. */
  followRatio: number;
  maxSentences: number;
  /** Characters of answer text; the best sentence is kept whatever its length. */
  maxChars: number;
}

/**
 * Chosen on the tuning split of eval/answers.json (272 questions: 216 answerable, 56 off-topic)
 * with `npx tsx eval/answers.ts --sweep` (eval/README.md). Only thresholds that refuse every
 * off-topic question count. Among those, these settings have the most questions right (221 of
 * 272), at a threshold of 0.20 alone (step 0.01). These weights are those of earlier rounds,
 * which won again. An absent word that names a topic weighs 8, an absent ordinary word 3
 * (extractive-topic.ts), an absent everyday verb, adjective or adverb 1.5 (`TermGroup.everyday`:
 * chosen on `tune`, real-dev and rd-blind1 among 1, 1.5 and 2, the most facts with every
 * synthetic off-topic question still refused). Answer kinds (kindWeight) re-rank the sentences only: the refusal
 * compares the threshold with the score without them (`Quote.support`).
 */
export const DEFAULT_TUNING: Readonly<ExtractiveTuning> = {
  threshold: 0.2,
  retrievalWeight: 0.1,
  contextWeight: 0.5,
  idfPower: 0,
  absentWeight: 8,
  plainAbsentWeight: 3,
  everydayAbsentWeight: 1.5,
  focusWeight: 0.75,
  kindWeight: 0.5,
  followRatio: 0.7,
  maxSentences: 3,
  maxChars: 600,
};

export type { Quote };

/**
 * The answer's sentences, or none when a name the question is about is in no passage (a drug, an
 * organism: `Scored.unheld`), however well its other words match, or when the best scores below
 * the threshold: only sentences that
 * state what the question asks for when it asks for a dose or a number (`statesRequired`), the best
 * and up to `maxSentences - 1` others scoring at least `followRatio` of it, within
 * `maxChars`. Order: passages by their best chosen sentence, and within a passage the document's
 * own order, so the most relevant statement leads and sentences of one passage read as their
 * author wrote them (a rule before its exception).
 */
export function chooseSentences(
  question: string,
  passages: readonly Passage[],
  tuning: ExtractiveTuning = DEFAULT_TUNING,
  glossary: readonly GlossaryEntry[] = [],
): Quote[] {
  const kinds = askedKinds(question);
  const { quotes, unheld } = scoreSentences(question, passages, tuning, glossary);
  if (unheld.length > 0) return [];
  const ranked = quotes
    .filter((q) => statesRequired(q.text, kinds))
    .sort((a, b) => b.score - a.score);
  const best = ranked[0];
  if (best === undefined || bestScore(ranked) < tuning.threshold) return [];
  const chosen = [best];
  let chars = best.text.length;
  for (const quote of ranked.slice(1)) {
    if (chosen.length >= tuning.maxSentences) break;
    if (quote.score < tuning.followRatio * best.score) break;
    if (chars + quote.text.length > tuning.maxChars) continue;
    chosen.push(quote);
    chars += quote.text.length;
  }
  const lead = new Map<number, number>();
  chosen.forEach((q, position) => {
    if (!lead.has(q.passage.n)) lead.set(q.passage.n, position);
  });
  const leadOf = (q: Quote) => lead.get(q.passage.n) ?? 0;
  return chosen.sort((a, b) => leadOf(a) - leadOf(b) || a.index - b.index);
}

/** The highest sentence support: how well the passages answer the question at all. */
export function bestScore(quotes: readonly Quote[]): number {
  return quotes.reduce((max, q) => Math.max(max, q.support), 0);
}
