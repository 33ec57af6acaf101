/**
 * Latency of the embedded vector index's in-memory search: 20,000 random unit vectors of 384
 * dimensions, 250 timed queries after 50 of warm-up, all rows and one category.
 *
 *   npx tsx bench/vector-index.ts
 */
import { DenseIndex } from '../src/providers/vectorstore/dense-index.js';

const COUNT = 20_000;
const DIMENSIONS = 384;

/** Deterministic unit vectors (xorshift), so runs compare. */
function unitVectors(count: number, dimensions: number, seed: number): Float32Array[] {
  let state = seed;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32 - 0.5;
  };
  return Array.from({ length: count }, () => {
    const v = Float32Array.from({ length: dimensions }, next);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

const index = new DenseIndex(DIMENSIONS);
unitVectors(COUNT, DIMENSIONS, 42).forEach((vector, i) => {
  index.set(
    {
      id: `chunk-${String(i)}`,
      documentId: `doc-${String(i % 10)}`,
      jobId: 'job',
      category: `cat-${String(i % 4)}`,
    },
    vector,
  );
});
for (const [label, category] of [
  ['all rows', undefined],
  ['one category', 'cat-1'],
] as const) {
  const times = unitVectors(300, DIMENSIONS, 9).map((query) => {
    const started = performance.now();
    index.search(query, 10, category);
    return performance.now() - started;
  });
  const sorted = times.slice(50).sort((a, b) => a - b);
  const at = (q: number) => (sorted[Math.floor(sorted.length * q)] ?? NaN).toFixed(3);
  console.log(`${label}: p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, p99 ${at(0.99)} ms`);
}
