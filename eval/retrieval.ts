import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  HASHED_TUNING,
  type SearchService,
  type SearchTuning,
} from '../src/modules/knowledge/search.js';
import { HashedEmbeddings, type FeatureWeights } from '../src/providers/embeddings/hashed.js';
import { loadQuestions, type Question } from './lib/corpus.js';
import { firstHit, score, type Scores } from './lib/metrics.js';
import { indexCorpus, type StoredChunk } from './lib/pipeline.js';

/**
 * Retrieval quality on the synthetic corpus, through the service's own pipeline: the corpus is
 * uploaded and indexed as the API would do it (PGlite in memory, embedded vector store, offline
 * hashed embeddings), then each question goes to SearchService: `lexical()` (PostgreSQL
 * full-text), `dense()` (vectors) and `search()` (the fused hybrid). Recall@5 and MRR per split.
 * Tune on `dev`; `heldout` is for reporting only.
 *
 * Chunk ids are random, and BM25 ties (chunks whose terms score alike) fall in id order, so one
 * run's figures depend on the ids it drew (heldout hybrid MRR 0.675 in one run, 0.703 in another
 * of the same code). `--runs N` indexes the corpus N times and prints each figure's mean with its
 * range.
 *
 *   npx tsx eval/retrieval.ts [--runs 5] [--misses] [--dims 768] [--weights 0.5,1,0.5]
 *                             [--rrf-k 60] [--fusion 1,1] [--candidates 50] [--sweep]
 *                             [--database-url postgres://... (an empty database)]
 */

const here = import.meta.dirname;
const METHODS = ['lexical', 'dense', 'hybrid'] as const;
type Method = (typeof METHODS)[number];
type Rankings = Record<Method, string[][]>;

function relevantChunks(chunks: readonly StoredChunk[], q: Question): Set<string> {
  return new Set(
    chunks
      .filter((c) => c.docKey === q.doc_key && c.text.includes(q.answer_contains))
      .map((c) => c.id),
  );
}

/** Each question's ranking by each method; hybrid as deep as the candidates, for MRR. */
async function rankAll(
  search: SearchService,
  questions: readonly Question[],
  depth: number,
): Promise<Rankings> {
  const rankings: Rankings = { lexical: [], dense: [], hybrid: [] };
  for (const { question } of questions) {
    rankings.lexical.push(await search.lexical(question, undefined));
    rankings.dense.push(await search.dense(question, undefined));
    const hits = await search.search(question, { limit: depth });
    rankings.hybrid.push(hits.map((h) => h.chunkId));
  }
  return rankings;
}

const SPLITS = ['dev', 'heldout', 'all'] as const;
/** A run's scores, by split then method. */
type RunScores = Record<(typeof SPLITS)[number], Record<Method, Scores>>;

function scoresOf(
  questions: readonly Question[],
  rankings: Rankings,
  relevant: readonly Set<string>[],
): RunScores {
  const bySplit = (split: (typeof SPLITS)[number]) => {
    const keep = questions.map((q) => split === 'all' || q.split === split);
    const kept = <T>(list: readonly T[]) => list.filter((_, i) => keep[i]);
    return Object.fromEntries(
      METHODS.map((m) => [m, score(kept(rankings[m]), kept(relevant))]),
    ) as Record<Method, Scores>;
  };
  return { dev: bySplit('dev'), heldout: bySplit('heldout'), all: bySplit('all') };
}

/** One run's figures; of several, each figure's mean and its range. */
function tables(runs: readonly RunScores[]): string[] {
  const figure = (values: number[]) => {
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    if (values.length === 1) return mean.toFixed(3);
    return `${mean.toFixed(3)} (${Math.min(...values).toFixed(3)}-${Math.max(...values).toFixed(3)})`;
  };
  const lines: string[] = [];
  for (const split of SPLITS) {
    const n = runs[0]?.[split].lexical.n ?? 0;
    const runsNote = runs.length > 1 ? `, ${String(runs.length)} runs: mean (range)` : '';
    lines.push('', `${split} (n=${String(n)}${runsNote})`, 'method    recall@5   MRR');
    for (const method of METHODS) {
      const recall = figure(runs.map((r) => r[split][method].recallAt5));
      const mrr = figure(runs.map((r) => r[split][method].mrr));
      lines.push(`${method.padEnd(9)} ${recall.padStart(8)}   ${mrr}`);
    }
  }
  return lines;
}

/** Dev questions some method misses in its top 5, with each method's first relevant rank. */
function misses(questions: readonly Question[], rankings: Rankings, relevant: Set<string>[]) {
  const lines: string[] = [];
  questions.forEach((q, i) => {
    if (q.split !== 'dev') return;
    const ranks = METHODS.map((m) => firstHit(rankings[m][i] ?? [], relevant[i] ?? new Set()));
    if (ranks.every((r) => r !== 0 && r <= 5)) return;
    const shown = METHODS.map((m, j) => `${m}=${ranks[j] ? String(ranks[j]) : '-'}`).join(' ');
    lines.push(`  ${q.id} ${shown}`);
  });
  return lines;
}

function numbers(value: string | undefined): number[] | undefined {
  return value === undefined ? undefined : value.split(',').map(Number);
}

function featureWeights(value: string | undefined): FeatureWeights | undefined {
  const [chars, words, pairs] = numbers(value) ?? [];
  if (chars === undefined) return undefined;
  return { chars, words: words ?? 1, pairs: pairs ?? 0.5 };
}

function tuningOf(values: {
  'rrf-k'?: string | undefined;
  fusion?: string | undefined;
  candidates?: string | undefined;
}): Partial<SearchTuning> {
  const tuning: Partial<SearchTuning> = {};
  if (values['rrf-k'] !== undefined) tuning.rrfK = Number(values['rrf-k']);
  const [lexical, dense] = numbers(values.fusion) ?? [];
  if (lexical !== undefined) tuning.weights = [lexical, dense ?? 1];
  if (values.candidates !== undefined) tuning.candidates = Number(values.candidates);
  return tuning;
}

/** Fusion settings on the dev questions only, best recall@5 then MRR first. */
async function sweep(
  withTuning: (t: Partial<SearchTuning>) => SearchService,
  dev: readonly Question[],
  relevant: readonly Set<string>[],
) {
  const results: { label: string; recall: number; mrr: number }[] = [];
  for (const candidates of [20, 50])
    for (const rrfK of [5, 10, 20, 40, 60])
      for (const lexical of [1, 1.5, 2, 3, 4]) {
        const search = withTuning({ candidates, rrfK, weights: [lexical, 1] });
        const rankings: string[][] = [];
        for (const { question } of dev) {
          const hits = await search.search(question, { limit: candidates });
          rankings.push(hits.map((h) => h.chunkId));
        }
        const s = score(rankings, relevant);
        const label = `candidates=${String(candidates)} k=${String(rrfK)} lexical=${String(lexical)}`;
        results.push({ label, recall: s.recallAt5, mrr: s.mrr });
      }
  results.sort((a, b) => b.recall - a.recall || b.mrr - a.mrr);
  for (const r of results.slice(0, 15)) {
    console.log(`${r.recall.toFixed(3)}  ${r.mrr.toFixed(4)}  ${r.label}`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dims: { type: 'string', default: '768' },
      weights: { type: 'string' },
      'rrf-k': { type: 'string' },
      fusion: { type: 'string' },
      candidates: { type: 'string' },
      'database-url': { type: 'string' },
      runs: { type: 'string', default: '1' },
      misses: { type: 'boolean', default: false },
      sweep: { type: 'boolean', default: false },
    },
  });
  const weights = featureWeights(values.weights);
  const embeddings = new HashedEmbeddings({
    dimensions: Number(values.dims),
    ...(weights === undefined ? {} : { weights }),
  });
  const questions = await loadQuestions(join(here, 'questions.json'));
  const runs: RunScores[] = [];
  const count = Math.max(1, Number(values.runs));
  for (let run = 0; run < count; run += 1) {
    const scores = await evaluate(values, embeddings, questions, run === 0);
    if (scores === undefined) return;
    runs.push(scores);
  }
  console.log(tables(runs).join('\n'));
}

/** Indexes the corpus and ranks every question; undefined when `--sweep` printed instead. */
async function evaluate(
  values: Parameters<typeof tuningOf>[0] & {
    'database-url'?: string | undefined;
    sweep?: boolean | undefined;
    misses?: boolean | undefined;
  },
  embeddings: HashedEmbeddings,
  questions: readonly Question[],
  first: boolean,
): Promise<RunScores | undefined> {
  const started = performance.now();
  const pipeline = await indexCorpus(join(here, 'corpus'), embeddings, {
    databaseUrl: values['database-url'],
  });
  try {
    const seconds = (performance.now() - started) / 1000;
    const docs = new Set(pipeline.chunks.map((c) => c.docKey)).size;
    if (first)
      console.log(
        `${String(docs)} documents, ${String(pipeline.chunks.length)} chunks indexed in ` +
          `${seconds.toFixed(1)} s (${pipeline.database.kind}); model ${embeddings.model}`,
      );
    const relevant = questions.map((q) => relevantChunks(pipeline.chunks, q));
    const empty = questions.filter((_, i) => relevant[i]?.size === 0).map((q) => q.id);
    if (empty.length > 0) throw new Error(`no chunk contains the answer of ${empty.join(', ')}`);
    if (values.sweep) {
      const dev = questions.flatMap((q, i) =>
        q.split === 'dev' ? [{ q, relevant: relevant[i] }] : [],
      );
      await sweep(
        pipeline.withTuning,
        dev.map((d) => d.q),
        dev.map((d) => d.relevant ?? new Set<string>()),
      );
      return undefined;
    }
    const tuning = tuningOf(values);
    const search = pipeline.withTuning(tuning);
    const depth = tuning.candidates ?? HASHED_TUNING.candidates;
    const rankings = await rankAll(search, questions, depth);
    if (values.misses && first)
      console.log(
        ['\ndev misses (first relevant rank)', ...misses(questions, rankings, relevant)].join('\n'),
      );
    return scoresOf(questions, rankings, relevant);
  } finally {
    await pipeline.close();
  }
}

await main();
