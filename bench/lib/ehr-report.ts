import { goal, type Latency } from './ehr-latency.js';
import type { RecoveryRun } from './ehr-recovery.js';
import { percentile, table, writeSection } from './sections.js';

/** The EHR benchmark's section of BENCHMARKS.md (issue 13). */

export interface EhrReport {
  settings: {
    rounds: number;
    warmUp: number;
    recoveries: number;
    halfOpenMs: number;
    probeIntervalMs: number;
    tickMs: number;
    patients: number;
    slowRounds: number;
    slowWarmUp: number;
    write: boolean;
  };
  /** Against the replay server. */
  latencies: Latency[];
  /** Against the FHIR server itself: direct, the service, the chat tool. */
  slow: Latency[];
  runs: RecoveryRun[];
  machine: { cores: number; load: number; loadAfter: number };
  versions: { postgres: string; redis: string };
}

/** Two decimals; a difference that rounds to zero is shown without a sign. */
const ms = (n: number) => `${(Math.abs(n) < 0.005 ? 0 : n).toFixed(2)} ms`;
const ms1 = (n: number) => `${n.toFixed(1)} ms`;
const sortedOf = (values: number[]) => Float64Array.from(values).sort();

function goalLine(name: string, way: Latency, direct: Latency): string {
  const check = (q: 'p50' | 'p95') => {
    const limit = goal(direct[q]);
    const verdict = way[q] <= limit ? 'met' : 'NOT met';
    return `${q} ${ms(way[q])} against ${ms(limit)} (1.2 × ${ms(direct[q])} + 5 ms): ${verdict}`;
  };
  return `- ${name}: ${check('p50')}; ${check('p95')}.`;
}

const isProfile = (l: Latency) => l.name.startsWith('profile:');

function profileTable(list: Latency[]): string[] {
  const rows = list
    .filter(isProfile)
    .map((l) => [
      l.name.slice('profile: '.length),
      ms(l.mean),
      ms(l.p50),
      ms(l.p95),
      ms(l.p99),
      l.note,
    ]);
  if (rows.length === 0) return [];
  return [
    'Measured in the same rounds, to say where the service’s time goes (not summaries):',
    '',
    table(['profile', 'mean', 'p50', 'p95', 'p99', 'what'], rows),
  ];
}

function latencyTable(all: Latency[], notes: boolean): string[] {
  const list = all.filter((l) => !isProfile(l));
  const direct = list[0];
  const service = list.find((l) => l.name.startsWith('EhrService.patientSummary'));
  const tool = list.find((l) => l.name.startsWith('chat tool'));
  if (direct === undefined || service === undefined || tool === undefined) return [];
  const rows = list.map((l) => [
    l.name,
    ms(l.mean),
    ms(l.p50),
    ms(l.p95),
    ms(l.p99),
    `${(l.p50 / direct.p50).toFixed(2)}×`,
    `${l.p50 >= direct.p50 ? '+' : '−'}${ms(Math.abs(l.p50 - direct.p50))}`,
    ...(notes ? [l.note] : []),
  ]);
  const head = ['way', 'mean', 'p50', 'p95', 'p99', 'p50 × direct', 'p50 − direct'];
  return [
    table(notes ? [...head, 'adds'] : head, rows),
    '',
    goalLine('the service (EhrService.patientSummary)', service, direct),
    goalLine('the chat tool', tool, direct),
  ];
}

/** Where the service's time over direct goes, at p50, from the layered rows. */
function breakdown(list: Latency[]): string[] {
  const p50 = (prefix: string) => list.find((l) => l.name.startsWith(prefix))?.p50 ?? Number.NaN;
  const direct = p50('direct');
  const provider = p50('FhirEhrProvider');
  const resilient = p50('+ Resilience');
  const unaudited = p50('EhrService, audit');
  const service = p50('EhrService.patientSummary');
  return [
    `At p50 the service takes ${ms(service - direct)} more than direct: ${ms(provider - direct)} in the provider (URLs, signals, checking the resources), ${ms(resilient - provider)} in the resilience layer (breaker, timeout and retry policies; the last good answer's write to Redis is not awaited), ${ms(unaudited - resilient)} for the flag and patient checks, and ${ms(service - unaudited)} for the audit entry: a PostgreSQL transaction of five round trips (BEGIN, the chain's advisory lock, the last entry, the insert, a COMMIT that waits for the WAL flush), the largest cost and the one that follows the database's load. The p95 adds the tail of the audit entry to that of the FHIR answers.`,
  ];
}

function latencySection(r: EhrReport): string[] {
  const s = r.settings;
  return [
    `### Patient summary latency`,
    '',
    `Goal: at most 1.2 × the direct latency plus 5 ms. Interleaved: every round runs each way once, in a shuffled order, one request at a time, over ${String(s.patients)} seeded patients in turn; warm-up rounds first.`,
    '',
    `Against the replay server (the FHIR server's answers kept per URL, answered at once: the strictest upstream, where the service's own time shows most), ${String(s.rounds)} summaries each way after ${String(s.warmUp)} warm-up rounds. Each row adds one layer to the row above it.`,
    '',
    ...latencyTable(r.latencies, true),
    '',
    ...profileTable(r.latencies),
    '',
    ...breakdown(r.latencies),
    '',
    `Against the FHIR server itself (medplum's in-memory repository: its vital-sign Observation search alone takes hundreds of milliseconds, so the ratio says little and the difference is what counts), ${String(s.slowRounds)} summaries each way after ${String(s.slowWarmUp)} warm-up rounds.`,
    '',
    ...latencyTable(r.slow, false),
  ];
}

function recoverySection(r: EhrReport): string[] {
  const runs = r.runs;
  if (runs.length === 0) return [];
  const withTraffic = runs.filter((x) => x.traffic);
  const without = runs.filter((x) => !x.traffic);
  const stat = (group: RecoveryRun[], pick: (run: RecoveryRun) => number) => {
    const s = sortedOf(group.map(pick).filter((v) => !Number.isNaN(v)));
    if (s.length === 0) return ['–', '–', '–'];
    return [ms1(percentile(s, 0.5)), ms1(s[0] ?? Number.NaN), ms1(s[s.length - 1] ?? Number.NaN)];
  };
  const rows: [string, (run: RecoveryRun) => number][] = [
    ['recovery → CLOSED', (x) => x.recovery],
    ['… half-open wait left at recovery', (x) => x.waitLeft],
    ['… wait over → first probe (HALF_OPEN)', (x) => x.toFirstProbe],
    ['… first probe → CLOSED (3 successful probes)', (x) => x.probing],
    ['first 503 → OPEN', (x) => x.toOpen],
    ['recovery → first fresh answer', (x) => x.staleAfterRecovery],
  ];
  const stale = sortedOf(withTraffic.flatMap((x) => x.staleLatencies));
  const staleCounts = sortedOf(withTraffic.map((x) => x.staleAnswers));
  const failed = withTraffic.reduce((a, x) => a + x.failedAnswers, 0);
  const probes = sortedOf(without.map((x) => x.probesAfterRecovery));
  const others = without.reduce((a, x) => a + x.otherRequestsAfterRecovery, 0);
  const p = r.settings;
  return [
    `### Recovery to CLOSED`,
    '',
    `Half-open wait ${String(p.halfOpenMs)} ms (\`EHR_BREAKER_HALF_OPEN_AFTER_MS\`), probe interval ${String(p.probeIntervalMs)} ms (\`EHR_BREAKER_PROBE_INTERVAL_MS\`), 3 successful probes to close (\`EHR_BREAKER_PROBE_SUCCESSES\`). The FHIR server answers 503 to everything until the breaker is OPEN; the faults are cleared (the recovery) at a random point in the first three quarters of the wait. ${String(withTraffic.length)} runs with traffic (one summary request every ${String(p.tickMs)} ms, each awaited, all along) and ${String(without.length)} without (no request at all once the breaker is open), alternately; transitions timed where the service sets \`circuit_breaker_state{dependency="ehr"}\`.`,
    '',
    table(
      ['interval', 'with traffic: median', 'min', 'max', 'no traffic: median', 'min', 'max'],
      rows.map(([name, pick]) => [name, ...stat(withTraffic, pick), ...stat(without, pick)]),
    ),
    '',
    `The breaker closes on its own probes of the server (\`GET metadata\` with the service's token and timeout), with or without users asking: recovery to CLOSED is the half-open wait still left, then three probes ${String(p.probeIntervalMs)} ms apart (two intervals and the probes' answer times). The stated bound: CLOSED within the wait left + 2 × the probe interval + three probe answers of the server's return, at most \`EHR_BREAKER_HALF_OPEN_AFTER_MS\` + 2 × \`EHR_BREAKER_PROBE_INTERVAL_MS\` + three answers (62 s and three \`metadata\` answers with the defaults). Without traffic the FHIR server received ${String(percentile(probes, 0.5))} requests from the recovery to CLOSED (median; ${String(probes[0] ?? 0)} to ${String(probes[probes.length - 1] ?? 0)}), all of them probes; ${String(others)} other requests. Users' questions are never trial calls: while the breaker is not CLOSED they are answered from the last good value without reaching the server. Opening takes five failed calls in a row: the first request's three attempts (two retries, 200 ms initial backoff with jitter) and two of the next one's.`,
    '',
    `Fallback (runs with traffic): the last good summary (Redis) answered ${String(percentile(staleCounts, 0.5))} requests per run (median; ${String(staleCounts[staleCounts.length - 1] ?? 0)} at most) from the first 503 to the first fresh answer, ${String(failed)} requests failed outright. While OPEN a stale answer took p50 ${ms(percentile(stale, 0.5))}, p99 ${ms(percentile(stale, 0.99))} (refused by the breaker, read from Redis, audited). Before the breaker opens a request waits for its retries (200 ms initial backoff, 2 retries) before falling back.`,
  ];
}

export async function report(r: EhrReport): Promise<void> {
  const markdown = [
    '## EHR patient summary and breaker recovery (issues 13, 23)',
    '',
    `Command: \`make bench-ehr\` (\`npx tsx bench/ehr.ts\`). Date: ${new Date().toISOString()}.`,
    `Machine: ${String(r.machine.cores)} cores, load ${r.machine.load.toFixed(2)} at the start and ${r.machine.loadAfter.toFixed(2)} at the end; PostgreSQL ${r.versions.postgres}, Redis ${r.versions.redis}.`,
    'The FHIR server is the tests’ one (medplum’s FHIR router over its in-memory repository, seeded with generated R4 resources, static bearer token) in a child process on 127.0.0.1. A summary is five FHIR reads in parallel: Patient, Conditions, active MedicationRequests, AllergyIntolerances and the latest 40 vital-sign Observations. "Direct" sends exactly the URLs the service sent for that patient (recorded by the server) with `fetch` (keep-alive) and parses the JSON. The service is the real one (`createDeps`: flags, audit log in a scratch PostgreSQL database, last good answers in Redis).',
    '',
    ...latencySection(r),
    '',
    ...recoverySection(r),
  ].join('\n');
  await writeSection('ehr', markdown, r.settings.write);
}
