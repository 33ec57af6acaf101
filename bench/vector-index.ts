import { performance } from 'node:perf_hooks';
import { chunkPages } from '../src/modules/knowledge/chunk.js';
import { HashedEmbeddings } from '../src/providers/embeddings/hashed.js';
import { DenseIndex } from '../src/providers/vectorstore/dense-index.js';
import type { VectorHit } from '../src/providers/vectorstore/types.js';
import { corpus, questions } from './lib/chat-corpus.js';
import { num, percentile, table, writeSection } from './lib/sections.js';

/**
 * `make bench-vectors` (issue 24): the embedded dense copy (DenseIndex) at BENCH_SIZES rows of
 * the bench corpus's chunks, embedded by the default model (hashed n-grams, 768 dimensions): the
 * exact scan of every row against the approximate graph (HNSW, usearch) that answers from
 * VECTOR_INDEX_APPROXIMATE_FROM rows on, in the same run. For each size: the time to link every
 * row into the graph (on every core, as the dense thread does), BENCH_QUERIES questions' latency
 * (p50 / p99, after 50 of warm-up, unfiltered and in one of the corpus's categories), and how many
 * of the exact top 10 the approximate search returns. Writes "Dense ranking at scale" in
 * BENCHMARKS.md unless BENCH_WRITE=0.
 */

const settings = {
  sizes: (process.env.BENCH_SIZES ?? '20000,50000,200000').split(',').map(Number),
  queries: num('BENCH_QUERIES', 500),
  write: process.env.BENCH_WRITE !== '0',
};
const WARM_UP = 50;
const CATEGORIES = ['cardiology', 'endocrinology', 'respiratory', 'renal'];

interface Row {
  rows: number;
  linkSeconds: number;
  graphMb: number;
  exact: Latency;
  approximate: Latency;
  exactCategory: Latency;
  approximateCategory: Latency;
  recall: number;
  recallCategory: number;
}
interface Latency {
  p50: number;
  p99: number;
}

const embeddings = new HashedEmbeddings();

function chunkTexts(count: number): string[] {
  const texts: string[] = [];
  for (const doc of corpus(count)) {
    for (const chunk of chunkPages([{ page: null, text: doc.text }])) texts.push(chunk.text);
  }
  return texts.slice(0, count);
}

function fill(index: DenseIndex, vectors: readonly Float32Array[]): void {
  vectors.forEach((vector, i) => {
    index.set(
      {
        id: String(i),
        documentId: `doc-${String(i >> 4)}`,
        jobId: 'job',
        category: CATEGORIES[(i >> 4) % CATEGORIES.length] ?? '',
      },
      vector,
    );
  });
}

/** Latency of each query after the warm-up, and the hits each returned. */
function timed(index: DenseIndex, queries: readonly Float32Array[], category?: string) {
  const times: number[] = [];
  const found = queries.map((query, i) => {
    const started = performance.now();
    const hits = index.search(query, 10, category);
    if (i >= WARM_UP) times.push(performance.now() - started);
    return hits;
  });
  const sorted = Float64Array.from(times).sort();
  return { latency: { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) }, found };
}

/**
 * The share of the exact top 10 the approximate search found, counting ties as found: the bench
 * corpus repeats sentences, so rows with the same score as the exact 10th are equally right.
 */
function recall(exact: readonly VectorHit[][], approximate: readonly VectorHit[][]): number {
  let kept = 0;
  let total = 0;
  exact.forEach((hits, i) => {
    const floor = (hits.at(-1)?.score ?? Infinity) - 1e-6;
    total += hits.length;
    kept += Math.min(hits.length, (approximate[i] ?? []).filter((h) => h.score >= floor).length);
  });
  return total === 0 ? 1 : kept / total;
}

function measure(rows: number): Row {
  const started = performance.now();
  const vectors = chunkTexts(rows).map((text) => embeddings.embedOne(text));
  console.log(`${String(vectors.length)} rows embedded in ${secs(started)} s`);
  const queries = questions(settings.queries + WARM_UP, 5).map((q) => embeddings.embedOne(q));

  const exactIndex = new DenseIndex(embeddings.dimensions);
  fill(exactIndex, vectors);
  const exact = timed(exactIndex, queries);
  const exactCategory = timed(exactIndex, queries, 'renal');

  const index = new DenseIndex(embeddings.dimensions, { approximateFrom: 1 });
  fill(index, vectors);
  const rssBefore = process.memoryUsage().rss;
  const linking = performance.now();
  while (index.drainGraph(256) > 0);
  const linkSeconds = (performance.now() - linking) / 1000;
  const graphMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
  const approximate = timed(index, queries);
  const approximateCategory = timed(index, queries, 'renal');
  console.log(`${String(rows)} rows: linked in ${linkSeconds.toFixed(1)} s`);
  return {
    rows: vectors.length,
    linkSeconds,
    graphMb,
    exact: exact.latency,
    approximate: approximate.latency,
    exactCategory: exactCategory.latency,
    approximateCategory: approximateCategory.latency,
    recall: recall(exact.found, approximate.found),
    recallCategory: recall(exactCategory.found, approximateCategory.found),
  };
}

const secs = (since: number) => ((performance.now() - since) / 1000).toFixed(1);
const ms = (l: Latency) => `${l.p50.toFixed(2)} / ${l.p99.toFixed(2)}`;

async function main(): Promise<void> {
  const results = settings.sizes.map(measure);
  const markdown = [
    '## Dense ranking at scale (issue 24)',
    '',
    `- Command: \`make bench-vectors\` (\`bench/vector-index.ts\`), ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    `- The bench corpus's chunks (bench/lib/chat-corpus.ts) embedded by the default model (hashed n-grams, ${String(embeddings.dimensions)} dimensions); ${String(settings.queries)} of its questions after ${String(WARM_UP)} of warm-up; top 10, unfiltered and in one category of four (a quarter of the rows).`,
    '- Exact: the int8 scan of every row (DenseIndex below VECTOR_INDEX_APPROXIMATE_FROM rows). Approximate: the HNSW graph (usearch, int8 cosine, connectivity 16, expansion 64 when linking and searching) asked for 400 candidates, ranked again with the float32 rows. A category too rare for 400 candidates to hold enough of it is scanned exactly. Recall: the share of the exact top 10 the approximate search returned (a row scoring the same as the exact 10th counts: the corpus repeats sentences).',
    '- In-process and single-threaded (the dense thread); linking uses every core, as the dense thread does between messages. Graph memory: the RSS linking added.',
    '',
    table(
      [
        'rows',
        'link every row, s',
        'graph MB',
        'exact p50 / p99 ms',
        'approximate p50 / p99 ms',
        'speed-up (p50)',
        'recall@10',
        'one category: exact / approximate p50 / p99 ms',
        'recall@10 in the category',
      ],
      results.map((r) => [
        r.rows.toLocaleString('en-US'),
        r.linkSeconds.toFixed(1),
        r.graphMb.toFixed(0),
        ms(r.exact),
        ms(r.approximate),
        `${(r.exact.p50 / r.approximate.p50).toFixed(1)}x`,
        r.recall.toFixed(3),
        `${ms(r.exactCategory)} / ${ms(r.approximateCategory)}`,
        r.recallCategory.toFixed(3),
      ]),
    ),
  ].join('\n');
  await writeSection('vector-index', markdown, settings.write);
}

await main();
