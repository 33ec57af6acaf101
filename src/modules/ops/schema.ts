import { Type, type Static } from 'typebox';
import { CHAOS_DEPENDENCIES } from '../../platform/chaos.js';
import { AuditEntry } from '../audit/schema.js';
import { Flag, FlagName } from '../flags/schema.js';

const Count = Type.Integer({ minimum: 0 });
const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(
  t: T,
  options?: { description: string },
) => Type.Union([t, Type.Null()], options);

const BreakerState = Type.Union(
  [Type.Literal('CLOSED'), Type.Literal('OPEN'), Type.Literal('HALF_OPEN'), Type.Null()],
  { description: 'null when the integration is disabled' },
);
const HealthStatus = Type.Union(
  [
    Type.Literal('ok'),
    Type.Literal('degraded'),
    Type.Literal('unavailable'),
    Type.Literal('disabled'),
    Type.Literal('unknown'),
  ],
  {
    description:
      '`disabled`: the service does not have (or has not configured) this subsystem; `unknown`: not checked yet',
  },
);

/** Spec 4.11: the provider health object has `status` and `fallback_active`. */
export const ProviderHealth = Type.Object({
  status: HealthStatus,
  fallback_active: Type.Boolean({
    description:
      'True while answers come from a fallback (the last good values) instead of the provider',
  }),
  detail: Type.Optional(Type.String()),
});

export const EhrHealth = Type.Object({
  ...ProviderHealth.properties,
  circuit_breaker: Type.Object({ state: BreakerState }),
});

const SpeechHealth = Type.Object({
  provider: Type.String(),
  status: HealthStatus,
  detail: Type.Optional(Type.String()),
  latency_ms: Nullable(Type.Number()),
});

export const VoiceHealth = Type.Object({
  ...ProviderHealth.properties,
  stt: SpeechHealth,
  tts: SpeechHealth,
  active_sessions: Type.Integer({ minimum: 0, description: 'Voice sockets on this instance' }),
  checked_at: Timestamp,
});

const LlmHealth = Type.Object({
  ...ProviderHealth.properties,
  provider: Type.String(),
  model: Type.String(),
  kind: Nullable(Type.Union([Type.Literal('remote'), Type.Literal('in_process')]), {
    description:
      '`remote`: an endpoint answered the probe; `in_process`: the offline model ran it here; null when the probe got no answer',
  }),
  probe: Nullable(Type.String(), {
    description: 'What the probe does (`GET /models`, or a fixed question answered in-process)',
  }),
  latency_ms: Nullable(Type.Integer({ minimum: 0 }), {
    description: 'How long the probe took; null when it got no answer in time',
  }),
  checked_at: Timestamp,
  model_listed: Nullable(Type.Boolean(), {
    description: 'Whether the endpoint lists `model`; null when not known (in-process, or no list)',
  }),
  last_error: Nullable(Type.String(), {
    description:
      'Why the latest probe that was not `ok` was not, kept after recovery; null if none since start',
  }),
  last_error_at: Nullable(Timestamp),
});

export const ProviderStatus = Type.Object({
  providers: Type.Object({
    ehr: EhrHealth,
    llm: LlmHealth,
    stt: Type.Object({ ...ProviderHealth.properties, provider: Type.String() }),
    tts: Type.Object({ ...ProviderHealth.properties, provider: Type.String() }),
    emotion: ProviderHealth,
    backchannel: ProviderHealth,
  }),
  chaos_enabled: Type.Boolean(),
});

export const EpicStatus = Type.Object({
  configured: Type.Boolean(),
  status: HealthStatus,
  fallback_active: Type.Boolean(),
  circuit_breaker: Type.Object({
    state: BreakerState,
    half_open_after_ms: Type.Integer(),
    probe_interval_ms: Type.Integer({
      description: 'Between probes of the FHIR server while the breaker is half-open',
    }),
    probe_successes: Type.Integer({ description: 'Successful probes in a row that close it' }),
  }),
  base_url: Nullable(Type.String({ description: 'The FHIR server, without credentials' })),
  auth: Nullable(Type.Union([Type.Literal('bearer'), Type.Literal('smart')])),
  timeout_ms: Type.Integer(),
});

export const EpicMetrics = Type.Object({
  scope: Type.Literal('instance'),
  write_requests: Count,
  write_success_rate: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
  avg_write_latency_ms: Nullable(Type.Number({ minimum: 0 })),
  write_refused: Type.Object(
    {
      flag_off: Count,
      patient_not_allowed: Count,
      invalid_input: Count,
    },
    {
      description:
        'Write requests refused before anything was sent to the EHR, by reason (counted in write_requests, never successes)',
    },
  ),
});

export const FeatureUpdate = Type.Object(
  { feature: FlagName, enabled: Type.Boolean() },
  { additionalProperties: false },
);
export type FeatureUpdate = Static<typeof FeatureUpdate>;
export const FeatureBatch = Type.Object(
  { updates: Type.Array(FeatureUpdate, { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
);
export const FeatureList = Type.Object({ items: Type.Array(Flag), total: Count });
export const FeatureBatchAnswer = Type.Object({ items: Type.Array(Flag), changed: Count });

export const AbVariantQuery = Type.Object(
  {
    user_id: Type.String({ format: 'uuid' }),
    test: FlagName,
  },
  { additionalProperties: false },
);
export const AbVariant = Type.Object({
  user_id: Type.String(),
  test: Type.String(),
  bucket: Type.Integer({ minimum: 0, maximum: 99 }),
  variant: Type.Union([Type.Literal('treatment'), Type.Literal('control')]),
  enabled: Type.Boolean({ description: 'Whether the flag is on for this user (treatment)' }),
  flag_exists: Type.Boolean(),
  rollout_percentage: Nullable(Type.Integer()),
});

export const VoiceSessions = Type.Object({
  active_count: Type.Integer({ minimum: 0 }),
  scope: Type.Union([Type.Literal('cluster'), Type.Literal('instance')]),
  by_endpoint: Type.Record(Type.String(), Count),
  instance_count: Type.Integer({ minimum: 0, description: 'Voice sockets on this instance' }),
});

const Fault = Type.Object({
  latency_ms: Type.Integer({ minimum: 0, maximum: 60_000 }),
  error_rate: Type.Number({ minimum: 0, maximum: 1 }),
});
const FaultStatus = Type.Object({
  ...Fault.properties,
  calls: Count,
  injected_errors: Count,
  delayed_calls: Count,
});
export const ChaosStatus = Type.Object({
  enabled: Type.Boolean(),
  scope: Type.Literal('instance'),
  dependencies: Type.Object(
    Object.fromEntries(CHAOS_DEPENDENCIES.map((d) => [d, FaultStatus])) as Record<
      (typeof CHAOS_DEPENDENCIES)[number],
      typeof FaultStatus
    >,
  ),
});
export const ChaosUpdate = Type.Object(
  {
    dependency: Type.Union(CHAOS_DEPENDENCIES.map((d) => Type.Literal(d))),
    latency_ms: Fault.properties.latency_ms,
    error_rate: Fault.properties.error_rate,
  },
  { additionalProperties: false },
);

const StageFigures = Type.Object({
  count: Count,
  p50_ms: Nullable(Type.Number()),
  p95_ms: Nullable(Type.Number()),
  mean_ms: Nullable(Type.Number()),
});
export const VoiceMetrics = Type.Object({
  scope: Type.Literal('instance'),
  window: Type.Literal('since_start'),
  uptime_seconds: Count,
  active_sessions: Count,
  stages: Type.Record(Type.String(), StageFigures, {
    description:
      'Per stage of the pipeline (`stt`, `llm_first_token`, `tts_first_audio`, `end_to_end`, `eou_delay`), from voice_stage_seconds',
  }),
});

const EventType = Type.String({
  pattern: '^[a-z][a-z0-9_]*(\\.[a-z0-9_]+)*$',
  maxLength: 100,
  'x-pattern-message': 'must be a dotted action name such as ehr.read',
});
export const AuditEventsQuery = Type.Object(
  {
    event_type: Type.Optional(EventType),
    event_type_prefix: Type.Optional(
      Type.String({
        pattern: '^[a-z][a-z0-9_]*(\\.[a-z0-9_]+)*\\.?$',
        maxLength: 100,
        'x-pattern-message': 'must be the start of a dotted action name such as ehr or ehr.',
      }),
    ),
    since: Type.Optional(Type.String({ format: 'date-time' })),
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 100 }),
  },
  { additionalProperties: false },
);
export const AuditStats = Type.Object({
  total: Count,
  failures: Count,
  last_24h: Count,
  oldest: Nullable(Timestamp),
  newest: Nullable(Timestamp),
  by_family: Type.Record(Type.String(), Count, {
    description: 'Entries per first segment of the action (`auth`, `ehr`, `flag`, ...)',
  }),
});

export const AuditEvents = Type.Object({
  count: Type.Integer({ minimum: 0, description: 'Events in this answer (at most `limit`)' }),
  total: Type.Integer({ minimum: 0, description: 'Events matching the filters in all' }),
  events: Type.Array(AuditEntry, { description: 'Newest first' }),
});
