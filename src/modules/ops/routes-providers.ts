import { conflict } from '../../errors.js';
import { Envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import { callerOf, contextOf, type App } from '../../platform/http/types.js';
import type { FastifyRequest } from 'fastify';
import { NOT_BUILT, opsTags, type OpsDeps } from './deps.js';
import { ChaosStatus, ChaosUpdate, EpicMetrics, EpicStatus, ProviderStatus } from './schema.js';
import type { SpeechProbe } from './voice-health.js';

const admin = { auth: 'admin' as const };
const CHAOS_OFF = { 409: errorResponse('Fault injection is off (CHAOS_ENABLED is not true)') };

/** The URL without user name and password: what an operator may see of it. */
function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}

/** A speech engine as a provider entry: its probe, no fallback. */
const speech = (p: SpeechProbe) => ({
  provider: p.provider,
  status: p.status,
  fallback_active: false,
  ...(p.detail === undefined ? {} : { detail: p.detail }),
});

/** Spec 4.11: provider status, the EHR's breaker and write figures, chaos (fault injection). */
export function opsProviderRoutes(app: App, deps: OpsDeps): void {
  const tags = opsTags.providers;

  app.get(
    '/api/admin/provider-status',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'getProviderStatus',
        summary: 'Every external provider: EHR, language model (probed), speech engines',
        description:
          'The EHR from its circuit breaker; the speech engines from the probes of `/health/voice`; the language model from a probe of its own (an OpenAI-compatible endpoint lists its models, `GET /models`, within `LLM_HEALTH_TIMEOUT_MS`; the offline model answers a fixed question in-process), made at most once per 30 s on this instance however many ask: `ok` answered within `LLM_HEALTH_SLOW_MS`; `degraded` answered slower, or with 429, 404, another 4xx or something that is not a model list; `unavailable` (down) no answer in time, no connection, 5xx, 401 or 403. Emotion and backchannel are subsystems this service does not have: `disabled`.',
        response: { 200: Envelope(ProviderStatus) },
      },
    },
    async (request) => {
      const [probes, llm] = await Promise.all([deps.voiceProbe.probe(), deps.llmHealth.check()]);
      return ok(request, {
        providers: {
          ehr: deps.ehr.status(),
          llm: {
            provider: deps.llm.name,
            model: deps.llm.model,
            status: llm.status,
            fallback_active: false,
            ...(llm.detail === undefined ? {} : { detail: llm.detail }),
            kind: llm.kind,
            probe: llm.probe,
            latency_ms: llm.latencyMs,
            checked_at: llm.checkedAt.toISOString(),
            model_listed: llm.modelListed,
            last_error: llm.lastError,
            last_error_at: llm.lastErrorAt?.toISOString() ?? null,
          },
          stt: speech(probes.stt),
          tts: speech(probes.tts),
          emotion: NOT_BUILT('emotion detection'),
          backchannel: NOT_BUILT('backchannel'),
        },
        chaos_enabled: deps.chaos.enabled,
      });
    },
  );

  app.get(
    '/api/admin/epic/status',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'getEhrStatus',
        summary: 'The EHR integration: configuration and circuit breaker state',
        response: { 200: Envelope(EpicStatus) },
      },
    },
    (request) => {
      const { ehr: settings } = deps.config;
      const status = deps.ehr.status();
      const fhir = settings.fhir;
      return ok(request, {
        configured: fhir !== undefined,
        status: status.status,
        fallback_active: status.fallback_active,
        circuit_breaker: {
          state: status.circuit_breaker.state,
          half_open_after_ms: settings.halfOpenAfterMs,
          probe_interval_ms: settings.probeIntervalMs,
          probe_successes: settings.probeSuccesses,
        },
        base_url: fhir === undefined ? null : withoutCredentials(fhir.baseUrl),
        auth: fhir?.auth.kind ?? null,
        timeout_ms: settings.timeoutMs,
      });
    },
  );

  app.get(
    '/api/admin/metrics/epic',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'getEhrMetrics',
        summary: 'EHR writes on this instance: count, success rate, mean latency, refusals',
        description:
          'Since the instance started. write_requests counts every write asked for, refused ones too (write_refused, by reason: flag off, patient not allowed, malformed patient id); the success rate is over all of them and null before the first. The mean latency is over the writes sent to the EHR (failed ones too) and null before the first.',
        response: { 200: Envelope(EpicMetrics) },
      },
    },
    (request) => ok(request, { scope: 'instance' as const, ...deps.ehr.writeMetrics() }),
  );

  chaosRoutes(app, deps);
}

function chaosRoutes(app: App, deps: OpsDeps): void {
  const tags = opsTags.providers;
  const { chaos, audit } = deps;
  const view = () => ({ ...chaos.status(), scope: 'instance' as const });
  const enabled = () => {
    if (!chaos.enabled)
      throw conflict('Fault injection is off: start the instance with CHAOS_ENABLED=true');
  };
  const record = async (request: FastifyRequest, action: string, details: object) => {
    const caller = callerOf(request);
    await audit.record(
      {
        action,
        success: true,
        actorId: caller.id,
        actorEmail: caller.email,
        resourceType: 'chaos',
        resourceId: null,
        details: { ...details },
      },
      contextOf(request),
    );
  };

  app.get(
    '/api/admin/chaos/status',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'getChaosStatus',
        summary: 'Fault injection: whether it is enabled, and each dependency’s faults and counts',
        description:
          'Faults exist only when the instance started with `CHAOS_ENABLED=true`, and apply to the answering instance only.',
        response: { 200: Envelope(ChaosStatus) },
      },
    },
    (request) => ok(request, view()),
  );

  app.post(
    '/api/admin/chaos/faults',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'setChaosFault',
        summary: 'Sets one dependency’s added latency and error rate (CHAOS_ENABLED only)',
        description:
          '409 `CONFLICT` when the instance did not start with `CHAOS_ENABLED=true`. Audited as `chaos.fault_set`.',
        body: ChaosUpdate,
        response: { 200: Envelope(ChaosStatus), ...CHAOS_OFF },
      },
    },
    async (request) => {
      enabled();
      const { dependency, latency_ms, error_rate } = request.body;
      chaos.set(dependency, { latency_ms, error_rate });
      await record(request, 'chaos.fault_set', { dependency, latency_ms, error_rate });
      return ok(request, view());
    },
  );

  app.delete(
    '/api/admin/chaos/faults',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'resetChaosFaults',
        summary: 'Removes every injected fault (CHAOS_ENABLED only)',
        description: 'Audited as `chaos.reset`.',
        response: { 200: Envelope(ChaosStatus), ...CHAOS_OFF },
      },
    },
    async (request) => {
      enabled();
      chaos.reset();
      await record(request, 'chaos.reset', {});
      return ok(request, view());
    },
  );
}
