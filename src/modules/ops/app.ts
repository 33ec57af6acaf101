import { baseApp, type BuiltApp } from '../../app.js';
import type { Deps } from '../../deps.js';
import type { DocsInfo } from '../../platform/http/docs.js';
import { opsTags, type OpsDeps } from './deps.js';
import { opsAuditVoiceRoutes } from './routes-audit-voice.js';
import { opsFeatureRoutes } from './routes-features.js';
import { opsHealthRoutes } from './routes-health.js';
import { opsProviderRoutes } from './routes-providers.js';
import { LlmHealthProbe } from './llm-health.js';
import { VoiceHealthProbe } from './voice-health.js';

const OPS_DOCS: DocsInfo = {
  title: 'Medical Assistant Service: operator API',
  description:
    'The operator server (spec 4.11), on its own port (`OPS_PORT`, default 8001, bound to 127.0.0.1 unless `OPS_HOST` says otherwise). `/health/*` answer bare objects for probes; every `/api/...` answer is the envelope { success, data, error, meta }; `/api/admin/*` requires an administrator’s bearer token.',
  tags: [
    { name: opsTags.health[0] ?? '', description: 'Provider health for probes' },
    {
      name: opsTags.providers[0] ?? '',
      description: 'Providers, the EHR breaker, fault injection',
    },
    { name: opsTags.features[0] ?? '', description: 'Feature switches and A/B variants' },
    { name: opsTags.audit[0] ?? '', description: 'Audit events and figures' },
    { name: opsTags.voice[0] ?? '', description: 'Voice sessions and stage latencies' },
  ],
};

/** What the operator routes need, taken from the service's dependencies. */
export function opsDeps(deps: Deps): OpsDeps {
  return {
    config: deps.config,
    db: deps.database.db,
    ehr: deps.ehr,
    flags: deps.flags,
    audit: deps.audit,
    status: deps.status,
    chaos: deps.chaos,
    llm: deps.chat.llm,
    llmHealth: new LlmHealthProbe(deps.chat.llm, deps.config.llmHealth),
    voiceHub: deps.voice.hub,
    voiceProbe: new VoiceHealthProbe(deps.voice.deps.stt, deps.voice.deps.tts, () =>
      deps.voice.sttLoaded(),
    ),
    metrics: deps.metrics,
    startedAt: deps.health.startedAt,
    now: () => new Date(),
  };
}

/**
 * The operator server: the same plumbing as the API (envelopes, request ids, validation, the
 * route policy with administrators' tokens, access logs) with only the spec 4.11 routes. It shares
 * the instance's services, so it sees exactly what the API sees.
 */
export async function buildOpsApp(deps: Deps): Promise<BuiltApp> {
  const built = await baseApp(deps, { docs: OPS_DOCS, cors: false });
  const ops = opsDeps(deps);
  opsHealthRoutes(built.app, ops);
  opsProviderRoutes(built.app, ops);
  opsFeatureRoutes(built.app, ops);
  opsAuditVoiceRoutes(built.app, ops);
  return built;
}
