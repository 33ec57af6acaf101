import { readFile } from 'node:fs/promises';
import type { Passage } from '../../src/providers/llm/types.js';

/** The split kept blind: answered only for the report after a model change. */
export const BLIND_SPLIT = 'heldout6';

/** A question of eval/answers.json: answerable (doc_key, answer_contains) or off-topic. */
export interface AnswerQuestion {
  id: string;
  split: 'dev' | 'heldout' | 'heldout2' | 'heldout3' | 'heldout4' | 'heldout5' | 'heldout6';
  question: string;
  doc_key?: string;
  /** The asked-for fact: an exact substring the answer must carry. */
  answer_contains?: string;
  /** What an off-topic question is about: cooking, sports, general, clinical (not in the corpus). */
  off_topic?: string;
}

/**
 * The splits reported. `tune` (dev and heldout to heldout5: all seen, now tuned on) is what every
 * tuning decision is made on; `heldout6` is blind, for the report after the next model change:
 * its questions are not even answered unless `--blind` asks for them (eval/answers.ts), so no run
 * while tuning can show it. `all` is every question answered.
 */
const SEEN = ['dev', 'heldout', 'heldout2', 'heldout3', 'heldout4', 'heldout5'] as const;

export const SPLITS = ['tune', ...SEEN, BLIND_SPLIT, 'all'] as const;

const TUNING: ReadonlySet<string> = new Set(SEEN);

/** Whether a question belongs to a split name of `SPLITS` (or to that one split). */
export function inSplit(q: AnswerQuestion, split: string): boolean {
  if (split === 'all') return true;
  if (split === 'tune') return TUNING.has(q.split);
  return q.split === split;
}

export async function loadAnswerQuestions(path: string): Promise<AnswerQuestion[]> {
  return JSON.parse(await readFile(path, 'utf8')) as AnswerQuestion[];
}

export interface Judged {
  refused: boolean;
  /** Answerable and the answer carries the fact. */
  fact: boolean;
  /** Quoted sentences, and those whose cited passage contains them. */
  cited: number;
  citedCorrectly: number;
}

/**
 * An answer's sentences and markers: "Sentence one. [2] Sentence two. [1]". The text before each
 * marker (back to the previous marker) is the sentence that cites it.
 */
export function citationsOf(answer: string): { sentence: string; n: number }[] {
  return [...answer.matchAll(/\s*(.+?)\s\[(\d+)\](?=\s|$)/g)].map((m) => ({
    sentence: m[1] ?? '',
    n: Number(m[2]),
  }));
}

export function judge(
  q: AnswerQuestion,
  answer: string,
  passages: readonly Passage[],
  noAnswer: string,
): Judged {
  const refused = answer === noAnswer;
  const cites = refused ? [] : citationsOf(answer);
  const correct = cites.filter((c) => passages.find((p) => p.n === c.n)?.text.includes(c.sentence));
  return {
    refused,
    fact: !refused && q.answer_contains !== undefined && answer.includes(q.answer_contains),
    cited: cites.length,
    citedCorrectly: correct.length,
  };
}

export interface SplitScores {
  answerable: number;
  offTopic: number;
  /** Answerable questions whose answer carries the fact. */
  facts: number;
  falseRefusals: number;
  offTopicRefusals: number;
  cited: number;
  citedCorrectly: number;
}

export function tally(questions: readonly AnswerQuestion[], judged: readonly Judged[]) {
  const s: SplitScores = {
    answerable: 0,
    offTopic: 0,
    facts: 0,
    falseRefusals: 0,
    offTopicRefusals: 0,
    cited: 0,
    citedCorrectly: 0,
  };
  questions.forEach((q, i) => {
    const j = judged[i];
    if (j === undefined) return;
    if (q.off_topic === undefined) {
      s.answerable += 1;
      if (j.fact) s.facts += 1;
      if (j.refused) s.falseRefusals += 1;
    } else {
      s.offTopic += 1;
      if (j.refused) s.offTopicRefusals += 1;
    }
    s.cited += j.cited;
    s.citedCorrectly += j.citedCorrectly;
  });
  return s;
}

const pct = (a: number, b: number) => (b === 0 ? '-' : `${((100 * a) / b).toFixed(1)}%`);

/** One Markdown table row: split, key fact, citation precision, off-topic and false refusals. */
export function row(label: string, s: SplitScores): string {
  return [
    label,
    `${pct(s.facts, s.answerable)} (${s.facts}/${s.answerable})`,
    `${pct(s.citedCorrectly, s.cited)} (${s.citedCorrectly}/${s.cited})`,
    `${pct(s.offTopicRefusals, s.offTopic)} (${s.offTopicRefusals}/${s.offTopic})`,
    `${pct(s.falseRefusals, s.answerable)} (${s.falseRefusals}/${s.answerable})`,
  ].join(' | ');
}

export const HEADER =
  'split | key fact in answer | citation precision | off-topic refused | false refusals';
