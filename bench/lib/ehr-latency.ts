import { performance } from 'node:perf_hooks';
import { percentile, prng, shuffled } from './sections.js';

/**
 * Interleaved latency runs for the EHR benchmark: every round runs each way of getting a patient
 * summary once, in a shuffled order, one request at a time (as one clinician's request would be),
 * so machine noise and order effects fall on all of them alike.
 */

export interface Way {
  name: string;
  /** What it adds over the row above it, for the table. */
  note: string;
  run(patientId: string): Promise<unknown>;
}

export interface Latency {
  name: string;
  note: string;
  /** Milliseconds, ascending. */
  sorted: Float64Array;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
}

export async function interleaved(
  ways: readonly Way[],
  patients: readonly string[],
  rounds: number,
  warmUp: number,
): Promise<Latency[]> {
  const random = prng(20_261_124);
  const samples = ways.map(() => new Float64Array(rounds));
  for (let round = -warmUp; round < rounds; round += 1) {
    const patient = patients[(round + warmUp) % patients.length] ?? '';
    for (const index of shuffled(
      ways.map((_, i) => i),
      random,
    )) {
      const way = ways[index];
      if (way === undefined) continue;
      const start = performance.now();
      await way.run(patient);
      const took = performance.now() - start;
      if (round >= 0) samples[index]![round] = took;
    }
  }
  return ways.map((way, i) => summarize(way, samples[i]!));
}

function summarize(way: Way, values: Float64Array): Latency {
  const sorted = values.slice().sort();
  const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length);
  return {
    name: way.name,
    note: way.note,
    sorted,
    mean,
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
  };
}

/** The goal of issue 13: at most 1.2 times the direct latency plus 5 ms. */
export const goal = (direct: number) => 1.2 * direct + 5;

/** Fetches each URL (in parallel) with a bearer token and parses the JSON, as a plain client. */
export async function fetchAll(urls: readonly string[], token: string): Promise<unknown[]> {
  return Promise.all(
    urls.map(async (url) => {
      const response = await fetch(url, {
        headers: { accept: 'application/fhir+json', authorization: `Bearer ${token}` },
      });
      if (!response.ok) throw new Error(`direct FHIR request failed: HTTP ${response.status}`);
      return JSON.parse(await response.text()) as unknown;
    }),
  );
}
