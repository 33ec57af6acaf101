import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CacheCounts } from './cache.js';

/** Cache layers of cache_requests_total: `l1` is each instance's memory, `l2` is Redis. */
export type CacheLayer = 'l1' | 'l2';

/** Every metric the service exports, registered once per process on its own registry. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const cache = cacheRequestsCounter(registers);
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route template and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers,
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration in seconds, by method and route template',
      labelNames: ['method', 'route'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    wsConnections: new Gauge({
      name: 'ws_connections',
      help: 'Open WebSocket connections, by endpoint',
      labelNames: ['endpoint'] as const,
      registers,
    }),
    wsSlowReaderCloses: new Counter({
      name: 'ws_slow_reader_closes_total',
      help: 'WebSocket connections closed (1013) because the client stopped reading what it was sent, by endpoint',
      labelNames: ['endpoint'] as const,
      registers,
    }),
    chatFirstChunk: new Histogram({
      name: 'chat_first_chunk_seconds',
      help: 'Time from message_send to the first streamed chunk',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
      registers,
    }),
    llmTokens: new Counter({
      name: 'llm_tokens_total',
      help: 'Language-model tokens the backend reported, by provider and direction (input: prompt, output: completion)',
      labelNames: ['provider', 'direction'] as const,
      registers,
    }),
    voiceStage: new Histogram({
      name: 'voice_stage_seconds',
      help: 'Duration of each voice pipeline stage',
      labelNames: ['stage'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
      registers,
    }),
    kbJobs: new Counter({
      name: 'kb_jobs_total',
      help: 'Knowledge-base indexing jobs reaching a state',
      labelNames: ['state'] as const,
      registers,
    }),
    cacheRequests: cache.counter,
    /** Makes a cache's hits and misses part of cache_requests_total{layer}. */
    countCache: cache.watch,
    circuitBreakerState: new Gauge({
      name: 'circuit_breaker_state',
      help: 'Circuit breaker state per dependency: 0 closed, 1 half-open, 2 open',
      labelNames: ['dependency'] as const,
      registers,
    }),
    dependencyUp: new Gauge({
      name: 'dependency_up',
      help: 'Whether a dependency answers (1) or was found lost by a request and not yet back (0)',
      labelNames: ['dependency'] as const,
      registers,
    }),
    dependencyRefused: new Counter({
      name: 'dependency_refused_total',
      help: 'Requests answered 503 because a dependency they need was lost',
      labelNames: ['dependency'] as const,
      registers,
    }),
    rateLimited: new Counter({
      name: 'rate_limited_total',
      help: 'Requests refused by a rate limit, by limit name',
      labelNames: ['limit'] as const,
      registers,
    }),
    authEvents: new Counter({
      name: 'auth_events_total',
      help: 'Authentication outcomes (login, login_failed, lockout, refresh, refresh_reuse)',
      labelNames: ['event'] as const,
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

interface WatchedCache {
  layer: CacheLayer;
  counts: CacheCounts;
  /** What was last added to the counter from this cache. */
  seen: { hits: number; misses: number };
}

/**
 * cache_requests_total{layer,result}, read from the caches' own integer counts when scraped, so a
 * look-up on the request path costs no label lookup. Each scrape adds what every cache counted
 * since the previous one; a count that went down (a cache replaced) adds nothing, so the counter
 * never decreases.
 */
function cacheRequestsCounter(registers: Registry[]) {
  const watched: WatchedCache[] = [];
  const counter = new Counter({
    name: 'cache_requests_total',
    help: 'Cache look-ups, by layer and result',
    labelNames: ['layer', 'result'] as const,
    registers,
    collect() {
      for (const cache of watched) {
        const { hits, misses } = cache.counts;
        this.inc({ layer: cache.layer, result: 'hit' }, Math.max(0, hits - cache.seen.hits));
        this.inc({ layer: cache.layer, result: 'miss' }, Math.max(0, misses - cache.seen.misses));
        cache.seen = { hits, misses };
      }
    },
  });
  const watch = (layer: CacheLayer, counts: CacheCounts): void => {
    watched.push({ layer, counts, seen: { hits: 0, misses: 0 } });
  };
  return { counter, watch };
}
