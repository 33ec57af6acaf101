import autocannon from 'autocannon';
import { cpuSeconds } from './processes.js';

export interface LoadSpec {
  url: string;
  connections: number;
  /** Seconds. */
  duration: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** The server's process, to measure its CPU time per request. */
  pid?: number;
}

/** One autocannon run: throughput and latency percentiles of the 2xx answers. */
export interface Run {
  rps: number;
  /** Milliseconds, from the client's per-request timings (autocannon's own histogram keeps whole ms). */
  p50: number;
  p99: number;
  requests: number;
  /** Server CPU time (user + system) per answered request, in µs; NaN without a pid. */
  cpuUs: number;
}

/**
 * Runs autocannon against one URL and fails on any error or non-2xx answer: a benchmark that hit
 * a rate limit or an error path would measure the wrong thing.
 */
export async function load(spec: LoadSpec): Promise<Run> {
  const latencies: number[] = [];
  const cpuBefore = spec.pid === undefined ? Number.NaN : cpuSeconds(spec.pid);
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.duration,
    method: spec.method ?? 'GET',
    ...(spec.headers === undefined ? {} : { headers: spec.headers }),
    ...(spec.body === undefined ? {} : { body: spec.body }),
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  const result = await instance;
  const cpu = spec.pid === undefined ? Number.NaN : cpuSeconds(spec.pid) - cpuBefore;
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(
      `${spec.method ?? 'GET'} ${spec.url}: ${result.errors} errors, ${result.non2xx} non-2xx ` +
        `answers (${JSON.stringify(result.statusCodeStats)})`,
    );
  }
  const sorted = Float64Array.from(latencies).sort();
  return {
    rps: sorted.length / result.duration,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    requests: sorted.length,
    cpuUs: (cpu / Math.max(1, sorted.length)) * 1e6,
  };
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The median run of several: median req/s and median of each percentile. */
export function summarize(runs: readonly Run[]): Run {
  return {
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    requests: runs.reduce((n, r) => n + r.requests, 0),
    cpuUs: median(runs.map((r) => r.cpuUs)),
  };
}
