import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  HASHED_TUNING,
  type SearchService,
  type SearchTuning,
} from '../src/modules/knowledge/search.js';
import { HashedEmbeddings, type FeatureWeights } from '../src/providers/embeddings/hashed.js';
import { loadQuestions, type Question } from './lib/corpus.js';
import { firstHit, score } from './lib/metrics.js';
import { indexCorpus, type StoredChunk } from './lib/pipeline.js';

/**
 * Retrieval quality on the synthetic corpus, through the service's own pipeline: the corpus is
 * uploaded and indexed as the API would do it (PGlite in memory, embedded vector store, offline
 * hashed embeddings), then each question goes to SearchService: `lexical()` (PostgreSQL
 * full-text), `dense()` (vectors) and `search()` (the fused hybrid). Recall@5 and MRR per split.
 * Tune on `dev`; `heldout` is for reporting only.
 *
 *   npx tsx eval/retrieval.ts [--misses] [--dims 768] [--weights 0.5,1,0.5]
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

function table(label: string, rankings: Rankings, relevant: readonly Set<string>[]): string[] {
  const lines = [`${label} (n=${String(relevant.length)})`, 'method    recall@5   MRR'];
  for (const method of METHODS) {
    const s = score(rankings[method], relevant);
    lines.push(`${method.padEnd(9)} ${s.recallAt5.toFixed(3).padStart(8)}   ${s.mrr.toFixed(3)}`);
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
  const started = performance.now();
  const pipeline = await indexCorpus(join(here, 'corpus'), embeddings, {
    databaseUrl: values['database-url'],
  });
  try {
    const seconds = (performance.now() - started) / 1000;
    const docs = new Set(pipeline.chunks.map((c) => c.docKey)).size;
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
      return;
    }
    const tuning = tuningOf(values);
    const search = pipeline.withTuning(tuning);
    const depth = tuning.candidates ?? HASHED_TUNING.candidates;
    const rankings = await rankAll(search, questions, depth);
    for (const split of ['dev', 'heldout', 'all'] as const) {
      const keep = questions.map((q) => split === 'all' || q.split === split);
      const pick = (r: Rankings): Rankings => ({
        lexical: r.lexical.filter((_, i) => keep[i]),
        dense: r.dense.filter((_, i) => keep[i]),
        hybrid: r.hybrid.filter((_, i) => keep[i]),
      });
      console.log(
        [
          '',
          ...table(
            split,
            pick(rankings),
            relevant.filter((_, i) => keep[i]),
          ),
        ].join('\n'),
      );
    }
    if (values.misses)
      console.log(
        ['\ndev misses (first relevant rank)', ...misses(questions, rankings, relevant)].join('\n'),
      );
  } finally {
    await pipeline.close();
  }
}

await main();
