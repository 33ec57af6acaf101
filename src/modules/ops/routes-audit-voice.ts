import { Envelope, ok } from '../../platform/http/envelope.js';
import type { App } from '../../platform/http/types.js';
import { toAuditDto, type AuditFilter } from '../audit/schema.js';
import { auditStats } from './audit-stats.js';
import { opsTags, type OpsDeps } from './deps.js';
import {
  AuditEvents,
  AuditEventsQuery,
  AuditStats,
  VoiceMetrics,
  VoiceSessions,
} from './schema.js';
import { voiceStageFigures } from './voice-metrics.js';

const admin = { auth: 'admin' as const };
const VOICE_ENDPOINTS = ['/api/voice/pipeline-ws', '/api/realtime'];

/** `ehr` and `ehr.` both mean the `ehr.` family: prefixes end at a segment boundary. */
const familyPrefix = (prefix: string) => (prefix.endsWith('.') ? prefix : `${prefix}.`);

/** Spec 4.11: the audit log for operators' tools, and the voice pipeline's live figures. */
export function opsAuditVoiceRoutes(app: App, deps: OpsDeps): void {
  app.get(
    '/api/admin/audit/events',
    {
      config: admin,
      schema: {
        tags: opsTags.audit,
        operationId: 'listAuditEvents',
        summary: 'The newest audit entries, filtered by type, type prefix and time',
        description:
          '`event_type` matches the action exactly (`ehr.read`); `event_type_prefix` matches a family at a segment boundary (`ehr` or `ehr.`: `ehr.read`, `ehr.write`, ...). Both given: both must hold (at most one action family can). `since` is inclusive. `count` is the number of events in this answer, `total` how many match.',
        querystring: AuditEventsQuery,
        response: { 200: Envelope(AuditEvents) },
      },
    },
    async (request) => {
      const { event_type, event_type_prefix, since, limit } = request.query;
      const filter: AuditFilter = {};
      if (since !== undefined) filter.since = new Date(since);
      if (event_type !== undefined) filter.action = { exact: event_type };
      else if (event_type_prefix !== undefined) {
        filter.action = { prefix: familyPrefix(event_type_prefix) };
      }
      const prefixMismatch =
        event_type !== undefined &&
        event_type_prefix !== undefined &&
        !event_type.startsWith(familyPrefix(event_type_prefix));
      if (prefixMismatch) return ok(request, { count: 0, total: 0, events: [] });
      const { rows, total } = await deps.audit.page(filter, 1, limit);
      return ok(request, { count: rows.length, total, events: rows.map(toAuditDto) });
    },
  );

  app.get(
    '/api/admin/audit/stats',
    {
      config: admin,
      schema: {
        tags: opsTags.audit,
        operationId: 'getAuditStats',
        summary: 'The audit log in figures: entries per family, failures, the last 24 hours',
        response: { 200: Envelope(AuditStats) },
      },
    },
    async (request) => ok(request, await auditStats(deps.db, deps.now())),
  );

  app.get(
    '/api/admin/voice/sessions',
    {
      config: admin,
      schema: {
        tags: opsTags.voice,
        operationId: 'getVoiceSessions',
        summary: 'Open voice sockets (both voice endpoints), on every live instance',
        description:
          'From the shared socket registry (`scope: "cluster"`); without Redis, or while it is unreachable, this instance only (`scope: "instance"`).',
        response: { 200: Envelope(VoiceSessions) },
      },
    },
    async (request) => {
      const { scope, by_endpoint } = await deps.status.endpointCounts();
      const voice = Object.fromEntries(VOICE_ENDPOINTS.map((e) => [e, by_endpoint[e] ?? 0]));
      const active = Object.values(voice).reduce((a, b) => a + b, 0);
      return ok(request, {
        active_count: active,
        scope,
        by_endpoint: voice,
        instance_count: deps.voiceHub.size,
      });
    },
  );

  app.get(
    '/api/voice/metrics',
    {
      config: { auth: 'none' },
      schema: {
        tags: opsTags.voice,
        operationId: 'getVoiceMetrics',
        summary: 'Voice pipeline stage latencies on this instance since it started',
        description:
          'Count, mean and estimated p50/p95 of each stage, from the `voice_stage_seconds` histogram that `/metrics` exports (quantiles interpolated within its buckets).',
        response: { 200: Envelope(VoiceMetrics) },
      },
    },
    async (request) =>
      ok(request, {
        scope: 'instance' as const,
        window: 'since_start' as const,
        uptime_seconds: Math.floor((Date.now() - deps.startedAt) / 1000),
        active_sessions: deps.voiceHub.size,
        stages: await voiceStageFigures(deps.metrics),
      }),
  );
}
