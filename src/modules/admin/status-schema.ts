import { Type } from 'typebox';

const Count = Type.Integer({ minimum: 0 });
const Timestamp = Type.String({ format: 'date-time' });
const OrNull = <T extends ReturnType<typeof Type.Number>>(t: T) => Type.Union([t, Type.Null()]);
const Num = (description: string) => Type.Number({ description });
const Bytes = (description: string) => Type.Integer({ minimum: 0, description });

const EndpointCounts = Type.Record(Type.String(), Count, {
  description:
    'Open sockets per endpoint: always `/ws`, `/api/realtime/ws`, `/api/voice/pipeline-ws` and `/api/realtime` (0 included)',
});

export const WebsocketStatus = Type.Object({
  scope: Type.Union([Type.Literal('cluster'), Type.Literal('instance')], {
    description:
      '`cluster`: every live instance, through Redis; `instance`: only the instance that answered (no Redis configured, or Redis unreachable)',
  }),
  instance_id: Type.String({ description: 'The instance that answered' }),
  total: Count,
  by_endpoint: EndpointCounts,
  users_total: Type.Integer({ minimum: 0, description: 'Users with at least one open socket' }),
  by_user: Type.Array(
    Type.Object({
      user_id: Type.String(),
      email: Type.Union([Type.String(), Type.Null()], {
        description: 'null when the user no longer exists',
      }),
      connections: Count,
      endpoints: EndpointCounts,
    }),
    { description: 'The 100 users with the most open sockets, most first' },
  ),
  instances: Type.Array(
    Type.Object({
      id: Type.String({ description: '`hostname:pid:uuid`' }),
      hostname: Type.String(),
      pid: Type.Integer(),
      connections: Count,
      updated_at: Timestamp,
    }),
  ),
});

const LatencyMs = Type.Object({
  p50: OrNull(Num('ms')),
  p95: OrNull(Num('ms')),
  p99: OrNull(Num('ms')),
});

const TokenCounts = Type.Object({
  answers: Type.Integer({ minimum: 0, description: 'Stored answers with usage' }),
  input_tokens: Type.Integer({ minimum: 0, description: 'Prompt tokens, every model call' }),
  output_tokens: Type.Integer({ minimum: 0, description: 'Completion tokens, every model call' }),
});
const TokenWindows = {
  last_24h: TokenCounts,
  all_time: TokenCounts,
};

const LlmTokens = Type.Object(
  {
    scope: Type.Literal('cluster', {
      description: 'Read from the stored answers: every instance, not only the one answering',
    }),
    since: Type.String({ format: 'date-time', description: 'Start of the `last_24h` window' }),
    total: Type.Object(TokenWindows),
    by_model: Type.Array(
      Type.Object({ provider: Type.String(), model: Type.String(), ...TokenWindows }),
      { description: 'One entry per provider and model that has answered, by provider then model' },
    ),
  },
  {
    description:
      "Tokens the language model reported for stored answers (the messages' `usage`). Answers without usage (the offline extractive model, servers that send none) are not counted.",
  },
);

export const SystemMetricsDto = Type.Object({
  instance_id: Type.String(),
  process: Type.Object({
    hostname: Type.String(),
    pid: Type.Integer(),
    node_version: Type.String(),
    uptime_seconds: Count,
    sampling_interval_seconds: Type.Number(),
  }),
  cpu: Type.Object({
    percent: OrNull(Num('CPU time as a percentage of one core over `interval_seconds`')),
    interval_seconds: Type.Number({ minimum: 0 }),
    user_seconds: Num('CPU time in user mode since the process started'),
    system_seconds: Num('CPU time in kernel mode since the process started'),
  }),
  memory: Type.Object({
    rss_bytes: Bytes('resident set size'),
    heap_used_bytes: Bytes('V8 heap in use'),
    heap_total_bytes: Bytes('V8 heap reserved'),
    external_bytes: Bytes('memory of C++ objects bound to JavaScript'),
    array_buffers_bytes: Bytes('ArrayBuffers and Buffers (part of external)'),
  }),
  event_loop_lag: Type.Object({
    p50_ms: OrNull(Num('median event-loop delay')),
    p99_ms: OrNull(Num('99th percentile')),
    max_ms: OrNull(Num('largest delay')),
    mean_ms: OrNull(Num('mean delay')),
    interval_seconds: Type.Number({ minimum: 0 }),
  }),
  database_pool: Type.Union([
    Type.Object({
      kind: Type.Literal('postgresql'),
      total: Count,
      idle: Count,
      waiting: Count,
      max: Count,
    }),
    Type.Object({ kind: Type.Literal('pglite') }),
  ]),
  http: Type.Object({
    window_seconds: Type.Number({
      minimum: 0,
      description: 'The span actually covered: up to 300, less while the process is young',
    }),
    requests: Count,
    requests_per_second: Type.Number({ minimum: 0 }),
    error_rate: OrNull(Num('share of answers with a 5xx status, 0..1')),
    client_error_rate: OrNull(Num('share of answers with a 4xx status, 0..1')),
    latency_ms: LatencyMs,
  }),
  llm_tokens: LlmTokens,
});
