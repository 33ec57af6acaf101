import { Envelope, ok } from '../../platform/http/envelope.js';
import type { App } from '../../platform/http/types.js';
import { SystemMetricsDto, WebsocketStatus } from './status-schema.js';
import type { StatusService } from './status-service.js';

const tags = ['admin-panel'];

/** Spec 4.4: the panel's live views, for administrators. */
export function statusRoutes(app: App, deps: { status: StatusService }): void {
  const { status } = deps;

  app.get(
    '/api/admin/panel/websocket-status',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'getWebsocketStatus',
        summary: 'Open sockets on every live instance, per endpoint, per user and per instance',
        description:
          'Merged from the shared registry in Redis: each instance rewrites its entry every `WS_REGISTRY_REFRESH_MS` and shortly after a socket opens or closes; an instance that stops doing so drops out after `WS_REGISTRY_TTL_MS`. Without Redis, or while Redis is unreachable, the answer covers the answering instance only (`scope: "instance"`).',
        response: { 200: Envelope(WebsocketStatus) },
      },
    },
    async (request) => ok(request, await status.websocketStatus()),
  );

  app.get(
    '/api/admin/panel/metrics',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'getSystemMetrics',
        summary:
          'CPU, memory, event-loop lag, database pool, the last 5 minutes of requests, and language-model tokens',
        description:
          "Figures of the instance that answers, except `llm_tokens`. Request rate, error shares and latency quantiles come from the service's own `http_requests_total` and `http_request_duration_seconds`, sampled every 15 s; `http.window_seconds` says how much of the 5 minutes the figures cover. `llm_tokens` sums the stored answers' `usage` (every instance's), per provider and model, over the last 24 hours and all time.",
        response: { 200: Envelope(SystemMetricsDto) },
      },
    },
    async (request) => ok(request, await status.metrics()),
  );
}
