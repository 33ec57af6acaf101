import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { expandAbbreviations } from '../src/modules/knowledge/abbreviations.js';
import { HashedEmbeddings, type FeatureWeights } from '../src/providers/embeddings/hashed.js';
import type { EmbeddingsProvider } from '../src/providers/embeddings/types.js';
import { bm25Ranker, type Ranker } from './lib/bm25.js';
import { loadCorpus, loadQuestions, type EvalChunk, type Question } from './lib/corpus.js';
import { rrf, score } from './lib/metrics.js';

/**
 * Retrieval quality on the synthetic corpus: recall@5 and MRR for lexical (in-memory BM25),
 * dense (offline hashed embeddings) and hybrid (RRF, k = 60), per question split. Tune on `dev`;
 * `heldout` is for reporting only.
 *
 *   npx tsx eval/retrieval.ts [--split dev|heldout|all] [--dims 768] [--weights 0.5,1,0.5] [--misses]
 */

const CANDIDATES = 50;
const here = import.meta.dirname;

type Method = 'lexical' | 'dense' | 'hybrid';

/** Exact cosine over all chunks: the corpus is small, and the store's ANN is not under test. */
async function denseRanker(provider: EmbeddingsProvider, chunks: readonly EvalChunk[]) {
  const started = performance.now();
  const vectors = await provider.embed(chunks.map((c) => c.searchText));
  const seconds = (performance.now() - started) / 1000;
  const rank = async (query: string, limit: number): Promise<string[]> => {
    const [q] = await provider.embed([query]);
    if (q === undefined) return [];
    const scored = vectors.map((v, i) => {
      let dot = 0;
      for (let d = 0; d < v.length; d += 1) dot += (v[d] ?? 0) * (q[d] ?? 0);
      return { id: chunks[i]?.id ?? '', dot };
    });
    scored.sort((a, b) => b.dot - a.dot || a.id.localeCompare(b.id));
    return scored.slice(0, limit).map((s) => s.id);
  };
  return { rank, chunksPerSecond: chunks.length / seconds };
}

function relevantChunks(chunks: readonly EvalChunk[], q: Question): Set<string> {
  return new Set(
    chunks
      .filter((c) => c.docKey === q.doc_key && c.text.includes(q.answer_contains))
      .map((c) => c.id),
  );
}

async function rankAll(
  questions: readonly Question[],
  lexical: Ranker,
  dense: Ranker | ((q: string, n: number) => Promise<string[]>),
) {
  const out: Record<Method, string[][]> = { lexical: [], dense: [], hybrid: [] };
  for (const q of questions) {
    // As the search service does: abbreviations expanded before both paths.
    const query = expandAbbreviations(q.question);
    const l = lexical(query, CANDIDATES);
    const d = await dense(query, CANDIDATES);
    out.lexical.push(l);
    out.dense.push(d);
    out.hybrid.push(rrf([l, d]));
  }
  return out;
}

function printTable(label: string, rankings: Record<Method, string[][]>, relevant: Set<string>[]) {
  console.log(`\n${label} (n=${relevant.length})`);
  console.log('method    recall@5   MRR');
  for (const method of ['lexical', 'dense', 'hybrid'] as const) {
    const s = score(rankings[method], relevant);
    console.log(`${method.padEnd(9)} ${s.recallAt5.toFixed(3).padStart(8)}   ${s.mrr.toFixed(3)}`);
  }
}

function printMisses(
  questions: readonly Question[],
  rankings: Record<Method, string[][]>,
  relevant: Set<string>[],
) {
  questions.forEach((q, i) => {
    const rank = (m: Method) =>
      (rankings[m][i] ?? []).findIndex((id) => relevant[i]?.has(id) === true) + 1 || '-';
    if (
      [rankings.dense, rankings.hybrid].some((r) =>
        (r[i] ?? []).slice(0, 5).every((id) => relevant[i]?.has(id) !== true),
      )
    ) {
      console.log(
        `  ${q.id} lex=${rank('lexical')} dense=${rank('dense')} hybrid=${rank('hybrid')} top=${rankings.dense[i]?.[0] ?? ''}`,
      );
    }
  });
}

function parseWeights(value: string | undefined): FeatureWeights | undefined {
  if (value === undefined) return undefined;
  const [chars = 0.5, words = 1, pairs = 0.5] = value.split(',').map(Number);
  return { chars, words, pairs };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      split: { type: 'string', default: 'all' },
      dims: { type: 'string', default: '768' },
      weights: { type: 'string' },
      misses: { type: 'boolean', default: false },
    },
  });
  const weights = parseWeights(values.weights);
  const provider = new HashedEmbeddings({
    dimensions: Number(values.dims),
    ...(weights === undefined ? {} : { weights }),
  });
  const chunks = await loadCorpus(join(here, 'corpus'));
  const all = await loadQuestions(join(here, 'questions.json'));
  const lexical = bm25Ranker(chunks.map((c) => ({ id: c.id, text: c.searchText })));
  const dense = await denseRanker(provider, chunks);
  console.log(
    `${chunks.length} chunks; model ${provider.model}; ${dense.chunksPerSecond.toFixed(0)} chunks/s embedded`,
  );
  const splits = values.split === 'all' ? (['dev', 'heldout'] as const) : [values.split];
  for (const split of splits) {
    const questions = all.filter((q) => q.split === split);
    const relevant = questions.map((q) => relevantChunks(chunks, q));
    const empty = questions.filter((_, i) => relevant[i]?.size === 0).map((q) => q.id);
    if (empty.length > 0) throw new Error(`no chunk contains the answer of ${empty.join(', ')}`);
    const rankings = await rankAll(questions, lexical, dense.rank);
    printTable(split, rankings, relevant);
    if (values.misses && split === 'dev') printMisses(questions, rankings, relevant);
  }
}

await main();
