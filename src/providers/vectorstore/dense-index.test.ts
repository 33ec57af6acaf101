import { describe, expect, it, vi } from 'vitest';
import { AnnGraph } from './ann-graph.js';
import { DenseIndex } from './dense-index.js';
import { createInt8Kernel } from './int8-kernel.js';
import { decodeVectorInto, encodeVector } from './vector-codec.js';

/** Deterministic pseudo-random unit vectors (xorshift), so failures reproduce. */
function vectors(count: number, dimensions: number, seed = 42): Float32Array[] {
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

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * (b[i] ?? 0), 0);
const entry = (i: number) => ({
  id: `chunk-${i}`,
  documentId: `doc-${i % 10}`,
  jobId: `job-${i % 3}`,
  category: `cat-${i % 4}`,
});

function exactTop(
  data: Float32Array[],
  query: Float32Array,
  limit: number,
  keep = (_i: number) => true,
) {
  return data
    .map((v, i) => ({ id: `chunk-${i}`, score: dot(v, query), i }))
    .filter(({ i }) => keep(i))
    .sort((a, b) => b.score - a.score)
    .slice(0, limit);
}

describe('int8 kernel', () => {
  it('gives the same dot products in WebAssembly and JavaScript, padding included', () => {
    const dims = 37; // not a multiple of 16
    const [wasm, js] = [createInt8Kernel(dims, 8, true), createInt8Kernel(dims, 8, false)];
    expect(wasm.stride).toBe(48);
    for (const k of [wasm, js]) {
      for (let i = 0; i < 8 * dims; i++)
        k.matrix[Math.floor(i / dims) * k.stride + (i % dims)] = ((i * 37) % 255) - 127;
      for (let j = 0; j < dims; j++) k.query[j] = ((j * 211) % 4095) - 2047;
      k.score(8);
    }
    expect(Array.from(wasm.scores)).toEqual(Array.from(js.scores));
    expect(wasm.scores[3]).toBe(
      Array.from(
        { length: dims },
        (_, j) => (js.matrix[3 * js.stride + j] ?? 0) * (js.query[j] ?? 0),
      ).reduce((a, b) => a + b),
    );
  });
});

describe('dense index', () => {
  const dims = 64;
  const data = vectors(3000, dims);
  const queries = vectors(20, dims, 7);

  it('returns the exact top hits and cosine scores, with and without a category', () => {
    for (const preferWasm of [true, false]) {
      const index = new DenseIndex(dims, { initialCapacity: 16, preferWasm }); // grows several times
      data.forEach((v, i) => {
        index.set(entry(i), v);
      });
      for (const query of queries) {
        const hits = index.search(query, 10);
        const expected = exactTop(data, query, 10);
        expect(hits.map((h) => h.id)).toEqual(expected.map((e) => e.id));
        hits.forEach((h, i) => {
          expect(h.score).toBeCloseTo(expected[i]?.score ?? NaN, 5);
        });
        const cat = index.search(query, 5, 'cat-2').map((h) => h.id);
        expect(cat).toEqual(exactTop(data, query, 5, (i) => i % 4 === 2).map((e) => e.id));
      }
      expect(index.search(queries[0] ?? new Float32Array(dims), 5, 'unknown')).toEqual([]);
    }
  });

  it('replaces, removes and keeps the remaining rows searchable', () => {
    const index = new DenseIndex(dims, { initialCapacity: 4 });
    data.slice(0, 100).forEach((v, i) => {
      index.set(entry(i), v);
    });
    const target = data[5] ?? new Float32Array(dims);
    index.set(entry(99), target); // chunk-99 now equals chunk-5
    expect(index.size).toBe(100);
    expect(new Set(index.search(target, 2).map((h) => h.id))).toEqual(
      new Set(['chunk-5', 'chunk-99']),
    );

    expect(index.removeWhere((e) => e.documentId === 'doc-5' && e.jobId !== 'job-0')).toBe(7);
    expect(index.has('chunk-5')).toBe(false);
    expect(index.has('chunk-15')).toBe(true); // job-0
    expect(index.search(target, 1).map((h) => h.id)).toEqual(['chunk-99']);
    const remaining = data.slice(0, 100).map((v, i) => (index.has(`chunk-${i}`) ? v : null));
    const query = queries[1] ?? new Float32Array(dims);
    const expected = remaining
      .map((v, i) => ({
        id: `chunk-${i}`,
        score: v === null ? -Infinity : dot(i === 99 ? target : v, query),
      }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 10)
      .map((e) => e.id);
    expect(index.search(query, 10).map((h) => h.id)).toEqual(expected);
    expect(index.removeWhere(() => true)).toBe(93);
    expect(index.search(query, 10)).toEqual([]);
  });
});

describe('dense index past approximateFrom (HNSW candidates, exact scores)', () => {
  const dims = 64;
  const data = vectors(3000, dims, 11);
  const queries = vectors(20, dims, 13);
  const drain = (index: DenseIndex) => {
    while (index.drainGraph(500) > 0);
  };

  it('scans exactly until every row is linked, then ranks the graph candidates exactly', () => {
    const index = new DenseIndex(dims, { approximateFrom: 2000 });
    data.forEach((v, i) => {
      index.set(entry(i), v);
    });
    expect(index.graphWaiting).toBe(3000);
    expect(index.ranking).toBe('exact');
    const query = queries[0] ?? new Float32Array(dims);
    expect(index.search(query, 10).map((h) => h.id)).toEqual(
      exactTop(data, query, 10).map((e) => e.id),
    );

    const graphSearch = vi.spyOn(AnnGraph.prototype, 'search');
    expect(graphSearch).not.toHaveBeenCalled();
    drain(index);
    expect(index.ranking).toBe('approximate');
    let found = 0;
    for (const q of queries) {
      const expected = exactTop(data, q, 10);
      const hits = index.search(q, 10);
      expect(hits).toHaveLength(10);
      for (const hit of hits) {
        expect(hit.score).toBeCloseTo(dot(data[Number(hit.id.slice(6))] ?? q, q), 5);
      }
      const ids = new Set(hits.map((h) => h.id));
      found += expected.filter((e) => ids.has(e.id)).length;
    }
    expect(found / (queries.length * 10)).toBeGreaterThan(0.95);
    expect(graphSearch).toHaveBeenCalledTimes(queries.length);
    graphSearch.mockRestore();
    // A category with a quarter of the rows needs more candidates than a quarter of the rows: exact.
    const cat = index.search(query, 5, 'cat-2').map((h) => h.id);
    expect(cat).toEqual(exactTop(data, query, 5, (i) => i % 4 === 2).map((e) => e.id));
  });

  it('links replaced rows again, forgets removed ones and drops the graph below half', () => {
    const index = new DenseIndex(dims, { approximateFrom: 2000 });
    data.forEach((v, i) => {
      index.set(entry(i), v);
    });
    drain(index);
    const target = data[5] ?? new Float32Array(dims);
    index.set(entry(2999), target);
    expect(index.graphWaiting).toBe(1);
    expect(index.ranking).toBe('exact');
    drain(index);
    expect(index.ranking).toBe('approximate');
    expect(new Set(index.search(target, 2).map((h) => h.id))).toEqual(
      new Set(['chunk-5', 'chunk-2999']),
    );

    expect(index.removeWhere((e) => e.id === 'chunk-5')).toBe(1);
    expect(index.search(target, 1).map((h) => h.id)).toEqual(['chunk-2999']);
    expect(index.ranking).toBe('approximate');

    index.removeWhere((e) => Number(e.id.slice(6)) < 2100);
    expect(index.size).toBe(900);
    expect(index.ranking).toBe('exact');
    expect(index.graphWaiting).toBe(0);
    const query = queries[2] ?? new Float32Array(dims);
    const kept = data.map((v, i) => (i === 2999 ? target : v));
    expect(index.search(query, 10).map((h) => h.id)).toEqual(
      exactTop(kept, query, 10, (i) => i >= 2100).map((e) => e.id),
    );
  });
});

describe('vector codec', () => {
  it('stores float32 little-endian and reads it back from any offset', () => {
    const vector = Float32Array.from([1, -2.5, 0.1]);
    const bytes = encodeVector(vector);
    expect(bytes.toString('hex')).toBe('0000803f000020c0cdcccc3d');
    const unaligned = Buffer.concat([Buffer.from([9]), bytes]).subarray(1);
    const target = new Float32Array(3);
    expect(decodeVectorInto(unaligned, target)).toBe(true);
    expect(Array.from(target)).toEqual(Array.from(vector));
    expect(decodeVectorInto(bytes, new Float32Array(4))).toBe(false);
  });
});
