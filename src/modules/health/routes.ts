import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { Metrics } from '../../platform/metrics.js';
import type { App } from '../../platform/http/types.js';
import type { HealthService } from './service.js';

const tags = ['health'];
const roles = ['postgres', 'redis', 'qdrant', 'nextcloud'] as const;
const byRole = <T extends ReturnType<typeof Type.Boolean> | ReturnType<typeof Type.String>>(t: T) =>
  Type.Object(Object.fromEntries(roles.map((r) => [r, t])) as Record<(typeof roles)[number], T>);

const Liveness = Type.Object({
  status: Type.String(),
  version: Type.String(),
  timestamp: Type.Number({ description: 'Unix seconds with fraction' }),
});

const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')]),
  checks: byRole(Type.Boolean()),
  backends: byRole(Type.String()),
  timestamp: Type.Number(),
});

/** The media type of the Prometheus text exposition format /metrics answers in. */
export const PROMETHEUS_TEXT = 'text/plain; version=0.0.4';

/**
 * Probes answer bare objects (DECISIONS 1); /metrics is Prometheus text. /health and /ready also
 * answer HEAD (load balancers probe with it): the same status and headers, no body.
 */
export function healthRoutes(
  app: App,
  deps: { health: HealthService; metrics: Metrics; limits: Config['rateLimit'] },
): void {
  const { health, metrics, limits } = deps;
  for (const method of ['GET', 'HEAD'] as const) {
    const verb = method === 'GET' ? 'get' : 'head';
    const noBody = method === 'HEAD' ? ' (HEAD: the same answer without a body)' : '';
    app.route({
      method,
      url: '/health',
      config: {
        auth: 'none',
        rateLimit: { name: 'health', max: limits.healthPerMinute, windowSeconds: 60 },
      },
      schema: {
        tags,
        operationId: `${verb}Health`,
        summary: `Liveness${noBody}`,
        response: { 200: Liveness },
      },
      handler: () => health.liveness(),
    });

    app.route({
      method,
      url: '/ready',
      config: {
        auth: 'none',
        rateLimit: { name: 'ready', max: limits.readyPerMinute, windowSeconds: 60 },
      },
      schema: {
        tags,
        operationId: `${verb}Readiness`,
        summary: `Readiness of every dependency; 503 when any is down${noBody}`,
        response: { 200: Readiness, 503: Readiness },
      },
      handler: async (_request, reply) => {
        const result = await health.readiness();
        return reply.code(result.status === 'ready' ? 200 : 503).send(result);
      },
    });
  }

  app.get(
    '/metrics',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        operationId: 'getMetrics',
        summary: 'Prometheus metrics',
        response: {
          200: {
            description: 'Prometheus text exposition format',
            content: { [PROMETHEUS_TEXT]: { schema: { type: 'string' } } },
          },
        },
      },
    },
    async (_request, reply) =>
      reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}
