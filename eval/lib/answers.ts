import { readFile } from 'node:fs/promises';
import type { Passage } from '../../src/providers/llm/types.js';
import { LedgerError, type LedgerRow } from './splits.js';

/** A question of eval/answers.json: answerable (doc_key, answer_contains) or off-topic. */
export interface AnswerQuestion {
  id: string;
  /** A split of the ledger (eval/SPLITS.md). */
  split: string;
  question: string;
  doc_key?: string;
  /** The asked-for fact: an exact substring the answer must carry. */
  answer_contains?: string;
  /** What an off-topic question is about: cooking, sports, general, clinical (not in the corpus). */
  off_topic?: string;
}

const QUESTIONS = 'eval/answers.json';

/**
 * The splits of eval/answers.json as the ledger (eval/SPLITS.md) marks them. `seen` splits form
 * `tune`, which every tuning decision is made on; `blind` ones are answered only with `--blind`,
 * for the report after a model change, so no run while tuning can show them.
 */
export interface AnswerSplits {
  seen: readonly string[];
  blind: readonly string[];
}

export function answerSplits(
  ledger: readonly LedgerRow[],
  questions: readonly AnswerQuestion[],
): AnswerSplits {
  const rows = ledger.filter((r) => r.questions === QUESTIONS);
  const listed = new Set(rows.map((r) => r.split));
  const missing = [...new Set(questions.map((q) => q.split))].filter((s) => !listed.has(s));
  if (missing.length > 0) {
    throw new LedgerError(
      `${QUESTIONS} has split ${missing.join(', ')}, which eval/SPLITS.md does not list: ` +
        'add its row (written, first looked at, status) before running it',
    );
  }
  const of = (status: LedgerRow['status']) =>
    rows.filter((r) => r.status === status).map((r) => r.split);
  return { seen: of('seen'), blind: of('blind') };
}

/** What a run answers and which rows it prints. */
export interface SplitPlan {
  /** The splits whose questions are answered. */
  answered: ReadonlySet<string>;
  /** The rows reported: `tune`, splits, `all`. */
  reported: readonly string[];
}

/**
 * The run `--split` and `--blind` ask for, or a refusal. `--blind` asks for blind figures: it is
 * refused for a split the ledger marks seen, for `tune` and `all` (which hold seen splits), for a
 * split the ledger does not list, and when no split is blind. A blind split is answered only with
 * `--blind`.
 */
export function planSplits(
  splits: AnswerSplits,
  request: { split?: string | undefined; blind: boolean },
): SplitPlan {
  const { split, blind } = request;
  const known = [...splits.seen, ...splits.blind, 'tune', 'all'];
  if (split !== undefined && !known.includes(split)) {
    throw new LedgerError(
      `${split} is not a split of eval/SPLITS.md (${known.join(', ')}): a split is answered ` +
        'only once the ledger lists it',
    );
  }
  if (blind) {
    if (split !== undefined && !splits.blind.includes(split)) {
      const what = split === 'tune' || split === 'all' ? 'holds seen splits' : 'is seen';
      throw new LedgerError(
        `--blind asks for blind figures, and ${split} ${what} (eval/SPLITS.md): its figures ` +
          'are tuning-split figures. Run without --blind.',
      );
    }
    if (splits.blind.length === 0) {
      throw new LedgerError(
        'eval/SPLITS.md marks no split blind: every split has been seen. Write a new split and ' +
          'add its row before asking for blind figures.',
      );
    }
  } else if (split !== undefined && splits.blind.includes(split)) {
    throw new LedgerError(
      `${split} is blind (eval/SPLITS.md): answered only with --blind, once, for the report`,
    );
  }
  const answered = new Set(blind ? [...splits.seen, ...splits.blind] : splits.seen);
  const reported =
    split !== undefined ? [split] : ['tune', ...splits.seen, ...(blind ? splits.blind : []), 'all'];
  return { answered, reported };
}

/** Whether a question belongs to a reported row: `tune` (the seen splits), `all`, or one split. */
export function inSplit(
  q: Pick<AnswerQuestion, 'split'>,
  split: string,
  splits: AnswerSplits,
): boolean {
  if (split === 'all') return true;
  if (split === 'tune') return splits.seen.includes(q.split);
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

/** A share as a report cell: "47.9% (23/48)", or "-" of nothing. */
export const fraction = (a: number, b: number) =>
  b === 0 ? '-' : `${pct(a, b)} (${String(a)}/${String(b)})`;

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
