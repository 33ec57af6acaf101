import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { retrievePassages } from '../src/modules/chat/retrieval.js';
import type { SearchService } from '../src/modules/knowledge/search.js';
import { HashedEmbeddings } from '../src/providers/embeddings/hashed.js';
import { ExtractiveProvider, NO_ANSWER } from '../src/providers/llm/extractive.js';
import { DEFAULT_TUNING, type ExtractiveTuning } from '../src/providers/llm/extractive-answer.js';
import type { Passage } from '../src/providers/llm/types.js';
import {
  HEADER,
  judge,
  loadAnswerQuestions,
  row,
  tally,
  type AnswerQuestion,
  BLIND_SPLIT,
  inSplit,
  SPLITS,
  type Judged,
} from './lib/answers.js';
import { sweep } from './lib/answer-sweep.js';
import { indexCorpus } from './lib/pipeline.js';

/**
 * Answer quality of the extractive model on the synthetic corpus, through the service's own
 * pipeline: the corpus indexed as the API would (eval/lib/pipeline.ts), each question's passages
 * from `retrievePassages` (hybrid search, as a chat turn retrieves them), the answer streamed by
 * `ExtractiveProvider`. Per split: answerable questions whose answer carries the asked-for fact,
 * citation precision (each quoted sentence is in the passage its marker cites), refusals of
 * off-topic questions and false refusals of answerable ones. Tune on `tune` only (dev and
 * heldout to heldout5); `heldout6` is blind, for the next report: its questions are answered
 * only with `--blind`, once, after the model change is final.
 *
 *   npx tsx eval/answers.ts [--misses] [--sweep] [--threshold 0.37] [--set knob=value]...
 *     [--passages 8] [--split tune] [--blind]
 */

const here = import.meta.dirname;

/** The provider's answer, as the chat engine reads it: text deltas until `done`. */
export async function answerOf(
  provider: ExtractiveProvider,
  question: string,
  passages: Passage[],
): Promise<string> {
  const request = { messages: [{ role: 'user' as const, content: question }], passages, tools: [] };
  let text = '';
  for await (const event of provider.stream(request, { signal: new AbortController().signal })) {
    if (event.type === 'text_delta') text += event.text;
  }
  return text;
}

function report(
  questions: readonly AnswerQuestion[],
  answers: string[],
  passages: Passage[][],
  splits: readonly string[],
) {
  const judged = questions.map((q, i) => judge(q, answers[i] ?? '', passages[i] ?? [], NO_ANSWER));
  console.log(`\n${HEADER}\n${HEADER.replace(/[^|]/g, '-')}`);
  for (const split of splits) {
    const keep = (q: AnswerQuestion) => inSplit(q, split);
    const picked = questions.flatMap((q, i) => (keep(q) ? [[q, judged[i]] as const] : []));
    const scores = tally(
      picked.map(([q]) => q),
      picked.map(([, j]) => j ?? { refused: false, fact: false, cited: 0, citedCorrectly: 0 }),
    );
    console.log(row(split, scores));
  }
  return judged;
}

async function retrieveAll(
  search: SearchService,
  questions: readonly AnswerQuestion[],
  limit: number,
): Promise<Passage[][]> {
  const passages: Passage[][] = [];
  for (const q of questions) passages.push(await retrievePassages(search, q.question, { limit }));
  return passages;
}

/** The tuning questions answered wrong: no fact, or an off-topic one answered. */
function printMisses(questions: readonly AnswerQuestion[], answers: string[], judged: Judged[]) {
  console.log('\ntuning misses (dev, heldout to heldout5)');
  questions.forEach((q, i) => {
    const j = judged[i];
    if (!inSplit(q, 'tune') || j === undefined) return;
    if (q.off_topic === undefined ? j.fact : j.refused) return;
    console.log(`  ${q.id} ${q.question}\n    want: ${q.answer_contains ?? 'a refusal'}`);
    console.log(`    got:  ${answers[i] ?? ''}`);
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      misses: { type: 'boolean', default: false },
      sweep: { type: 'boolean', default: false },
      threshold: { type: 'string' },
      /** Other knobs of ExtractiveTuning, `--set plainAbsentWeight=1.5` (repeatable). */
      set: { type: 'string', multiple: true, default: [] },
      passages: { type: 'string', default: '8' },
      /** `tune` while tuning. */
      split: { type: 'string' },
      /** Also answer the blind split (for the report only). */
      blind: { type: 'boolean', default: false },
    },
  });
  if (values.split === BLIND_SPLIT && !values.blind) {
    throw new Error(`${BLIND_SPLIT} is blind: answered only with --blind, for the report`);
  }
  const questions = (await loadAnswerQuestions(join(here, 'answers.json'))).filter(
    (q) => values.blind || q.split !== BLIND_SPLIT,
  );
  const embeddings = new HashedEmbeddings({ dimensions: 768 });
  const pipeline = await indexCorpus(join(here, 'corpus'), embeddings);
  try {
    const limit = Number(values.passages);
    const passages = await retrieveAll(pipeline.search, questions, limit);
    if (values.sweep) {
      const dev = questions.flatMap((q, i) =>
        inSplit(q, 'tune') ? [{ q, passages: passages[i] ?? [] }] : [],
      );
      sweep(dev);
      return;
    }
    const tuning: Partial<ExtractiveTuning> = {};
    if (values.threshold !== undefined) tuning.threshold = Number(values.threshold);
    for (const knob of values.set) {
      const [key = '', value = ''] = knob.split('=');
      if (!Object.hasOwn(DEFAULT_TUNING, key)) throw new Error(`unknown knob: ${knob}`);
      if (value.trim() === '' || !Number.isFinite(Number(value))) {
        throw new Error(`not a number: ${knob}`);
      }
      Object.assign(tuning, { [key]: Number(value) });
    }
    const provider = new ExtractiveProvider({ tuning });
    const answers: string[] = [];
    for (const [i, q] of questions.entries()) {
      answers.push(await answerOf(provider, q.question, passages[i] ?? []));
    }
    console.log(`${questions.length} questions, ${limit} passages each; model ${provider.model}`);
    const splits =
      values.split !== undefined
        ? [values.split]
        : SPLITS.filter((s) => values.blind || s !== BLIND_SPLIT);
    const judged = report(questions, answers, passages, splits);
    if (values.misses) printMisses(questions, answers, judged);
  } finally {
    await pipeline.close();
  }
}

if (process.argv[1] === import.meta.filename) await main();
