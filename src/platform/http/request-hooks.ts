import type { FastifyInstance } from 'fastify';
import { serviceUnavailable } from '../../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';

const PROBES = new Set(['/health', '/ready', '/metrics']);

/**
 * What every request goes through, in callback style (no promise per request for work that never
 * waits): the X-Request-ID header; the 503 envelope once the instance is closing; metrics and the
 * one access line per answer.
 */
export function registerRequestHooks(app: FastifyInstance, log: Logger, metrics: Metrics): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    if (!closing) {
      done();
      return;
    }
    void reply.header('connection', 'close');
    done(serviceUnavailable('The service is shutting down; retry on another instance'));
  });

  // The access line holds only the request id, method, route template, status and duration, none
  // of which the redaction paths cover: its own logger skips redaction, which cost about 10 µs per
  // line (each key runs through the wildcard paths).
  const accessLog = log.child({}, { redact: [] });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const elapsed = reply.elapsedTime;
    metrics.httpRequests.inc({ method: request.method, route, status: reply.statusCode });
    metrics.httpDuration.observe({ method: request.method, route }, elapsed / 1000);
    // Probes answer every few seconds per orchestrator: their lines are debug, the rest info.
    const line = {
      reqId: request.id,
      method: request.method,
      route,
      status: reply.statusCode,
      ms: Math.round(elapsed),
    };
    accessLog[PROBES.has(route) ? 'debug' : 'info'](line, 'request completed');
    done();
  });
}
