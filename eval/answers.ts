import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { retrievePassages } from '../src/modules/chat/retrieval.js';
import { HashedEmbeddings } from '../src/providers/embeddings/hashed.js';
import { ExtractiveProvider, NO_ANSWER } from '../src/providers/llm/extractive.js';
import { DEFAULT_TUNING, type ExtractiveTuning } from '../src/providers/llm/extractive-answer.js';
import type { GlossaryEntry, Passage } from '../src/providers/llm/types.js';
import {
  answerSplits,
  type AnswerSplits,
  HEADER,
  judge,
  loadAnswerQuestions,
  planSplits,
  row,
  tally,
  type AnswerQuestion,
  inSplit,
  type Judged,
} from './lib/answers.js';
import { sweep } from './lib/answer-sweep.js';
import { indexCorpus, type Pipeline } from './lib/pipeline.js';
import { LedgerError, readLedger } from './lib/splits.js';
import {
  judgeReal,
  loadDocuments,
  loadRealQuestions,
  REAL_HEADER,
  realRow,
  SHARED_CORPUS,
  tallyReal,
  type RealAnswer,
} from './lib/real-dev.js';
import { serviceWith } from './lib/real-service.js';

/**
 * Answer quality of the extractive model on the synthetic corpus, through the service's own
 * pipeline: the corpus indexed as the API would (eval/lib/pipeline.ts), each question's passages
 * from `retrievePassages` (hybrid search, as a chat turn retrieves them), the answer streamed by
 * `ExtractiveProvider`. Per split: answerable questions whose answer carries the asked-for fact,
 * citation precision (each quoted sentence is in the passage its marker cites), refusals of
 * off-topic questions and false refusals of answerable ones. Which splits are seen (`tune`, tuned
 * on) and which are blind comes from the ledger, eval/SPLITS.md: a blind split is answered only
 * with `--blind`, once, after the model change is final, and `--blind` is refused for any split
 * the ledger marks seen.
 *
 *   npx tsx eval/answers.ts [--misses] [--sweep] [--threshold 0.37] [--set knob=value]...
 *     [--passages 8] [--split tune] [--blind]
 *
 * With `--corpus real-dev` it evaluates the service as its users meet it instead (issue 25): the
 * real documents of ../shared/corpus/real-dev/ uploaded to a listening service started with the
 * embedded defaults, every question asked over its chat socket (eval/lib/real-service.ts), and
 * the answers scored on key fact, right document cited, false refusals, unanswerable questions
 * declined and citation precision (eval/lib/real-dev.ts). `--split`, `--blind` and `--misses` as
 * above, over the real-dev splits of the ledger.
 *
 *   npx tsx eval/answers.ts --corpus real-dev [--misses] [--split real-dev] [--blind]
 *   npx tsx eval/answers.ts --corpus real-test    # held out: uploaded and indexed only
 */

const here = import.meta.dirname;

/** The provider's answer, as the chat engine reads it: text deltas until `done`. */
export async function answerOf(
  provider: ExtractiveProvider,
  question: string,
  passages: Passage[],
  glossary: GlossaryEntry[] = [],
): Promise<string> {
  const request = {
    messages: [{ role: 'user' as const, content: question }],
    passages,
    tools: [],
    glossary,
  };
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
  splits: AnswerSplits,
  reported: readonly string[],
) {
  const judged = questions.map((q, i) => judge(q, answers[i] ?? '', passages[i] ?? [], NO_ANSWER));
  console.log(`\n${HEADER}\n${HEADER.replace(/[^|]/g, '-')}`);
  for (const split of reported) {
    const keep = (q: AnswerQuestion) => inSplit(q, split, splits);
    const picked = questions.flatMap((q, i) => (keep(q) ? [[q, judged[i]] as const] : []));
    const scores = tally(
      picked.map(([q]) => q),
      picked.map(([, j]) => j ?? { refused: false, fact: false, cited: 0, citedCorrectly: 0 }),
    );
    console.log(row(split, scores));
  }
  return judged;
}

/** Each question's passages and glossary entries, as a chat turn reads them. */
async function retrieveAll(
  pipeline: Pipeline,
  questions: readonly AnswerQuestion[],
  limit: number,
): Promise<{ passages: Passage[][]; glossaries: GlossaryEntry[][] }> {
  const passages: Passage[][] = [];
  const glossaries: GlossaryEntry[][] = [];
  for (const q of questions) {
    passages.push(await retrievePassages(pipeline.search, q.question, { limit }));
    glossaries.push(await pipeline.glossary.for(q.question));
  }
  return { passages, glossaries };
}

/** The tuning questions answered wrong: no fact, or an off-topic one answered. */
function printMisses(
  questions: readonly AnswerQuestion[],
  answers: string[],
  judged: Judged[],
  splits: AnswerSplits,
) {
  console.log(`\ntuning misses (${splits.seen.join(', ')})`);
  questions.forEach((q, i) => {
    const j = judged[i];
    if (!inSplit(q, 'tune', splits) || j === undefined) return;
    if (q.off_topic === undefined ? j.fact : j.refused) return;
    console.log(`  ${q.id} ${q.question}\n    want: ${q.answer_contains ?? 'a refusal'}`);
    console.log(`    got:  ${answers[i] ?? ''}`);
  });
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      misses: { type: 'boolean', default: false },
      sweep: { type: 'boolean', default: false },
      threshold: { type: 'string' },
      /** Other knobs of ExtractiveTuning, `--set plainAbsentWeight=1.5` (repeatable). */
      set: { type: 'string', multiple: true, default: [] },
      passages: { type: 'string', default: '8' },
      /** `tune` while tuning. */
      split: { type: 'string' },
      /** Also answer the blind splits of eval/SPLITS.md (for the report only). */
      blind: { type: 'boolean', default: false },
      /** `real-dev`: the real documents, through a listening service. */
      corpus: { type: 'string' },
    },
  });
  if (values.corpus !== undefined) {
    await realCorpus(values.corpus, values);
    return;
  }
  const all = await loadAnswerQuestions(join(here, 'answers.json'));
  const splits = answerSplits(await readLedger(), all);
  const plan = planSplits(splits, { split: values.split, blind: values.blind });
  const questions = all.filter((q) => plan.answered.has(q.split));
  const embeddings = new HashedEmbeddings({ dimensions: 768 });
  const pipeline = await indexCorpus(join(here, 'corpus'), embeddings);
  try {
    const limit = Number(values.passages);
    const { passages, glossaries } = await retrieveAll(pipeline, questions, limit);
    if (values.sweep) {
      const dev = questions.flatMap((q, i) =>
        inSplit(q, 'tune', splits) ? [{ q, passages: passages[i] ?? [] }] : [],
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
      answers.push(await answerOf(provider, q.question, passages[i] ?? [], glossaries[i]));
    }
    console.log(`${questions.length} questions, ${limit} passages each; model ${provider.model}`);
    console.log(
      `seen (tune): ${splits.seen.join(', ')}; blind: ${splits.blind.join(', ') || 'none'}`,
    );
    const judged = report(questions, answers, passages, splits, plan.reported);
    if (values.misses) printMisses(questions, answers, judged, splits);
  } finally {
    await pipeline.close();
  }
}

/** `--corpus`: the real documents asked over the chat socket of a listening service. */
async function realCorpus(
  corpus: string,
  options: { split?: string | undefined; blind: boolean; misses: boolean },
): Promise<void> {
  if (corpus === 'real-test') {
    // Held out: its documents are only uploaded and indexed (a smoke test), never asked.
    const documents = await loadDocuments(join(SHARED_CORPUS, corpus));
    await (await serviceWith(documents)).close();
    console.log(
      `real-test: ${String(documents.length)} documents uploaded and indexed; no questions`,
    );
    return;
  }
  const { questions: all, splits } = await loadRealQuestions(corpus, await readLedger());
  const plan = planSplits(splits, { split: options.split, blind: options.blind });
  const questions = all.filter((q) => plan.answered.has(q.split));
  const documents = await loadDocuments(join(SHARED_CORPUS, corpus));
  const service = await serviceWith(documents);
  const answers: RealAnswer[] = [];
  try {
    for (const q of questions) answers.push(await service.ask(q.q));
  } finally {
    await service.close();
  }
  const judged = questions.map((q, i) => judgeReal(q, answers[i] ?? { content: '', cited: [] }));
  console.log(
    `${String(questions.length)} questions over the chat socket, ${String(documents.length)} documents`,
  );
  console.log(
    `seen (tune): ${splits.seen.join(', ')}; blind: ${splits.blind.join(', ') || 'none'}`,
  );
  console.log(`\n${REAL_HEADER}\n${REAL_HEADER.replace(/[^|]/g, '-')}`);
  for (const label of plan.reported) {
    const picked = judged.filter((_, i) => {
      const q = questions[i];
      return q !== undefined && inSplit(q, label, splits);
    });
    console.log(realRow(label, tallyReal(picked)));
  }
  if (!options.misses) return;
  console.log(`\ntuning misses (${splits.seen.join(', ')})`);
  questions.forEach((q, i) => {
    const j = judged[i];
    if (j === undefined || !splits.seen.includes(q.split)) return;
    if (j.answerable ? j.fact : j.declined) return;
    console.log(`  ${q.id} [${q.doc_key ?? 'unanswerable'}] ${q.q}`);
    console.log(`    want: ${q.keys.join(' | ') || 'a decline'}`);
    console.log(`    got:  [${answers[i]?.cited.join(', ') ?? ''}] ${answers[i]?.content ?? ''}`);
  });
}

if (process.argv[1] === import.meta.filename) {
  try {
    await main(process.argv.slice(2));
  } catch (error) {
    // A refusal of the ledger is a message for the person running it, not a crash.
    if (!(error instanceof LedgerError)) throw error;
    console.error(`eval/answers.ts: ${error.message}`);
    process.exitCode = 2;
  }
}
