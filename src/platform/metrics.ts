import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Every metric the service exports, registered once per process on its own registry. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
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
    chatFirstChunk: new Histogram({
      name: 'chat_first_chunk_seconds',
      help: 'Time from message_send to the first streamed chunk',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
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
    cacheRequests: new Counter({
      name: 'cache_requests_total',
      help: 'Cache look-ups, by layer and result',
      labelNames: ['layer', 'result'] as const,
      registers,
    }),
    circuitBreakerState: new Gauge({
      name: 'circuit_breaker_state',
      help: 'Circuit breaker state per dependency: 0 closed, 1 half-open, 2 open',
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
