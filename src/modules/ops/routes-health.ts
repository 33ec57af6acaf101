import type { App } from '../../platform/http/types.js';
import { NOT_BUILT, opsTags, type OpsDeps } from './deps.js';
import { EhrHealth, ProviderHealth, VoiceHealth } from './schema.js';
import type { VoiceProbes } from './voice-health.js';

const tags = opsTags.health;

/** Worst of the two engines: both down is unavailable, one down (or unknown) degraded. */
export function voiceStatus(p: VoiceProbes): 'ok' | 'degraded' | 'unavailable' {
  const states = [p.stt.status, p.tts.status];
  if (states.every((s) => s === 'unavailable')) return 'unavailable';
  if (states.includes('unavailable')) return 'degraded';
  return 'ok';
}

/**
 * Provider health for probes (bare objects, like /health and /ready): each answers 200 with its
 * `status`, so a probe reads the field rather than the HTTP status.
 */
export function opsHealthRoutes(app: App, deps: OpsDeps): void {
  app.get(
    '/health/epic',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        operationId: 'getEhrHealth',
        summary: 'The EHR (FHIR) integration: status, fallback and circuit breaker state',
        description:
          '`ok`: the breaker is closed and reads are fresh. `degraded`: probing the FHIR server (half-open) or reads answered from the last good values (`fallback_active`). `unavailable`: open with nothing to fall back on. `disabled`: no FHIR_BASE_URL.',
        response: { 200: EhrHealth },
      },
    },
    () => deps.ehr.status(),
  );

  for (const [path, name, operationId] of [
    ['/health/emotion', 'emotion detection', 'getEmotionHealth'],
    ['/health/backchannel', 'backchannel', 'getBackchannelHealth'],
  ] as const) {
    app.get(
      path,
      {
        config: { auth: 'none' },
        schema: {
          tags,
          operationId,
          summary: `The ${name} subsystem: always disabled (the service has none)`,
          response: { 200: ProviderHealth },
        },
      },
      () => NOT_BUILT(name),
    );
  }

  app.get(
    '/health/voice',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        operationId: 'getVoiceHealth',
        summary: 'The voice pipeline: its speech engines probed with real work',
        description:
          'Speaks one word through the text-to-speech engine and transcribes a quarter second of silence through the recognizer (once it is loaded: a health check does not load it), each within 5 s; probes are reused for 15 s. Remote engines are not probed (`unknown`).',
        response: { 200: VoiceHealth },
      },
    },
    async () => {
      const probes = await deps.voiceProbe.probe();
      return {
        status: voiceStatus(probes),
        fallback_active: false,
        stt: probes.stt,
        tts: probes.tts,
        active_sessions: deps.voiceHub.size,
        checked_at: probes.checkedAt.toISOString(),
      };
    },
  );
}
