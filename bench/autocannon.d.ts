/** The part of autocannon's programmatic API (v8) that bench/ uses; the package ships no types. */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
    headers?: Record<string, string>;
    body?: string;
    timeout?: number;
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  }

  export interface Result {
    url: string;
    requests: Histogram;
    latency: Histogram;
    /** Seconds. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
  }

  /**
   * Running instance: emits `response` (client, statusCode, resBytes, responseTimeMs) for every
   * answer, and settles with the result.
   */
  export type Instance = EventEmitter & PromiseLike<Result>;

  export default function autocannon(opts: Options): Instance;
}
