import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../src/config.js';
import { users } from '../src/db/schema/index.js';
import { createDeps, type Deps } from '../src/deps.js';
import { SYSTEM_CONTEXT } from '../src/modules/audit/service.js';
import { KvLastGoodStore } from '../src/modules/ehr/last-good.js';
import { EhrService, type EhrCaller } from '../src/modules/ehr/service.js';
import { readSummary } from '../src/modules/ehr/summary.js';
import { createLogger } from '../src/platform/logger.js';
import { FhirEhrProvider } from '../src/providers/ehr/fhir.js';
import { lastGoodKey, Resilience } from '../src/providers/ehr/resilience.js';
import { startFhirPeer, type FhirPeer } from './lib/fhir-peer.js';
import { fetchAll, interleaved, type Way } from './lib/ehr-latency.js';
import { recoveryRun, watchBreakerGauge, type RecoveryRun } from './lib/ehr-recovery.js';
import { report } from './lib/ehr-report.js';
import {
  ADMIN_DATABASE_URL,
  REDIS_URL,
  createDatabase,
  deleteRedisPrefix,
  serverVersions,
} from './lib/fixtures.js';
import { num, prng, runBenchmark } from './lib/sections.js';

/**
 * `make bench-ehr` (issue 13): the patient summary through the service against the same FHIR
 * requests sent directly, and the time from the provider's recovery to a CLOSED breaker.
 *
 * The FHIR server is the tests' one (medplum's router, in-memory repository, seeded) in a child
 * process. One summary is five FHIR reads in parallel (Patient, Conditions, MedicationRequests,
 * AllergyIntolerances, vital-sign Observations); "direct" replays the exact URLs the service sent
 * for that patient with fetch (keep-alive). The service is the real one (createDeps: flags, the
 * audit log in a scratch PostgreSQL database, last good answers in Redis). The rows between direct
 * and the service add one layer each, to say where the time goes. Rounds are interleaved.
 *
 * The main comparison runs against a replay server in front of the FHIR server (its kept answers,
 * at once: the strictest upstream, see lib/fhir-peer.ts); a shorter one against the FHIR server
 * itself, whose in-memory searches take hundreds of milliseconds. Recovery runs against the replay.
 *
 * Knobs: BENCH_ROUNDS (400), BENCH_WARMUP (60), BENCH_SLOW_ROUNDS (60), BENCH_SLOW_WARMUP (6),
 * BENCH_RECOVERIES (20 with traffic, as many without), BENCH_HALF_OPEN_MS (200),
 * BENCH_PROBE_INTERVAL_MS (100), BENCH_TICK_MS (20), BENCH_PATIENTS (3), BENCH_WRITE=0 (leave
 * BENCHMARKS.md alone).
 */

const settings = {
  rounds: num('BENCH_ROUNDS', 400),
  warmUp: num('BENCH_WARMUP', 60),
  recoveries: num('BENCH_RECOVERIES', 20),
  halfOpenMs: num('BENCH_HALF_OPEN_MS', 200),
  probeIntervalMs: num('BENCH_PROBE_INTERVAL_MS', 100),
  tickMs: num('BENCH_TICK_MS', 20),
  patients: num('BENCH_PATIENTS', 3),
  slowRounds: num('BENCH_SLOW_ROUNDS', 60),
  slowWarmUp: num('BENCH_SLOW_WARMUP', 6),
  write: process.env.BENCH_WRITE !== '0',
};

const BEARER = randomBytes(24).toString('base64url');

const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) {
    await fn().catch((err: unknown) => {
      console.error('clean-up step failed:', err);
    });
  }
}

async function service(fhirBaseUrl: string, database: string, prefix: string): Promise<Deps> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-ehr-'));
  cleanups.push(() => {
    rmSync(dataDir, { recursive: true, force: true });
    return Promise.resolve();
  });
  const config = loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    DATABASE_URL: database,
    REDIS_URL,
    REDIS_PREFIX: prefix,
    JWT_SECRET: randomBytes(48).toString('base64url'),
    KB_WORKER_ENABLED: 'false',
    FHIR_BASE_URL: fhirBaseUrl,
    FHIR_AUTH: 'bearer',
    FHIR_BEARER_TOKEN: BEARER,
    EHR_ALLOW_ALL_PATIENTS: 'true',
    EHR_BREAKER_HALF_OPEN_AFTER_MS: String(settings.halfOpenMs),
    EHR_BREAKER_PROBE_INTERVAL_MS: String(settings.probeIntervalMs),
  });
  const deps = await createDeps(config, createLogger(config));
  cleanups.push(() => deps.close());
  return deps;
}

/** A clinician with `ehr.read` on (a 100 % flag), as a real user row the audit entries name. */
async function clinician(deps: Deps): Promise<EhrCaller> {
  const id = randomUUID();
  const at = new Date();
  const email = `${id}@bench.example`;
  await deps.database.db.insert(users).values({
    id,
    email,
    fullName: 'Bench Clinician',
    passwordHash: 'not-a-hash',
    createdAt: at,
    updatedAt: at,
  });
  await deps.flags.create(
    { id, email },
    { name: 'ehr.read', enabled: true, description: 'bench', rolloutPercentage: 100 },
    SYSTEM_CONTEXT,
  );
  return { id, email };
}

/** Paths and queries the service sends for each patient's summary, as the replay received them. */
async function summaryPaths(deps: Deps, peer: FhirPeer, caller: EhrCaller) {
  const paths = new Map<string, string[]>();
  for (const id of peer.patientIds) {
    await peer.forget();
    await deps.ehr.patientSummary(caller, id);
    const seen = await peer.requests();
    if (seen.length !== 5) throw new Error(`a summary sent ${String(seen.length)} requests, not 5`);
    paths.set(id, seen);
  }
  await peer.forget();
  return paths;
}

/** Each way of getting a summary, from the bare FHIR requests to the chat tool. */
function ways(deps: Deps, baseUrl: string, caller: EhrCaller, paths: Map<string, string[]>): Way[] {
  const origin = new URL(baseUrl).origin;
  const urls = new Map([...paths].map(([id, list]) => [id, list.map((p) => origin + p)]));
  const provider = new FhirEhrProvider({
    baseUrl,
    auth: { kind: 'bearer', token: BEARER },
    timeoutMs: deps.config.ehr.timeoutMs,
  });
  const resilience = () =>
    new Resilience({
      dependency: 'ehr-bench',
      timeoutMs: deps.config.ehr.timeoutMs,
      halfOpenAfterMs: settings.halfOpenMs,
      store: new KvLastGoodStore(deps.kv),
    });
  const bare = resilience();
  const unaudited = new EhrService({
    flags: deps.flags,
    audit: { record: () => Promise.resolve() },
    log: deps.log,
    access: { allowAll: true, patients: [] },
    provider,
    resilience: resilience(),
  });
  const tool = deps.chat.tools.find((t) => t.definition.name === 'ehr_patient_summary');
  if (tool === undefined) throw new Error('the ehr_patient_summary tool is not registered');
  const signal = new AbortController().signal;
  return [
    {
      name: 'direct (fetch, 5 requests in parallel)',
      note: 'the baseline: the same URLs, JSON parsed',
      run: (id) => fetchAll(urls.get(id) ?? [], BEARER),
    },
    {
      name: 'FhirEhrProvider (readSummary)',
      note: '+ URL building, per-call timeout signal, resource and bundle checks',
      run: (id) => readSummary(provider, id, signal),
    },
    {
      name: '+ Resilience.read',
      note: '+ breaker, timeout, retry policy, last good answer kept in Redis (not awaited)',
      run: (id) =>
        bare.read(lastGoodKey(id, 'bench-summary'), (s) => readSummary(provider, id, s), {
          signal,
        }),
    },
    {
      name: 'EhrService, audit not written',
      note: '+ flag `ehr.read`, id and allowed-patient checks (audit a no-op)',
      run: (id) => unaudited.patientSummary(caller, id, { signal }),
    },
    {
      name: 'EhrService.patientSummary (the service)',
      note: '+ the `ehr.read` audit entry written to PostgreSQL',
      run: (id) => deps.ehr.patientSummary(caller, id, { signal }),
    },
    {
      name: 'chat tool ehr_patient_summary',
      note: '+ argument check and the compact JSON for the model',
      run: (id) => tool.run({ patient_id: id }, { userId: caller.id, signal }),
    },
  ];
}

/**
 * Not summaries: the `ehr.read` audit entry on its own, as the service writes it (a transaction:
 * the chain's advisory lock, the last entry, the insert, a commit that waits for the WAL flush),
 * and the same with `synchronous_commit` off for that transaction (the commit no longer waits).
 */
function auditWays(deps: Deps, caller: EhrCaller): Way[] {
  const entry = (id: string) => ({
    action: 'ehr.read',
    success: true,
    actorId: caller.id,
    actorEmail: caller.email ?? null,
    resourceType: 'patient',
    resourceId: id,
    details: { resource_types: ['Patient'], count: 12, stale: false, bench: true },
  });
  return [
    {
      name: 'profile: the audit entry alone (AuditService.record)',
      note: 'what the service waits for after the FHIR answers',
      run: (id) => deps.audit.record(entry(id), SYSTEM_CONTEXT),
    },
    {
      name: 'profile: the audit entry, synchronous_commit off',
      note: 'the same append, its commit not waiting for the WAL flush',
      run: (id) =>
        deps.database.db.transaction(async (tx) => {
          await tx.execute(sql`set local synchronous_commit = off`);
          await deps.audit.append(tx, entry(id), SYSTEM_CONTEXT);
        }),
    },
  ];
}

async function recoveries(deps: Deps, peer: FhirPeer, caller: EhrCaller): Promise<RecoveryRun[]> {
  const transitions = watchBreakerGauge(deps);
  const ctx = {
    deps,
    peer,
    caller,
    patientId: peer.patientIds[0] ?? '',
    transitions,
    halfOpenMs: settings.halfOpenMs,
    tickMs: settings.tickMs,
  };
  const random = prng(13);
  const runs: RecoveryRun[] = [];
  // Alternately with and without traffic, so both see the same conditions.
  for (let i = 0; i < 2 * settings.recoveries; i += 1) {
    const traffic = i % 2 === 0;
    // Cleared somewhere in the first three quarters of the half-open wait.
    const clearDelay = Math.floor(random() * 0.75 * settings.halfOpenMs);
    const run = await recoveryRun(ctx, clearDelay, traffic);
    console.log(
      `recovery ${String(i + 1)} (${traffic ? 'with' : 'without'} traffic): ${run.recovery.toFixed(1)} ms to CLOSED (wait left ${run.waitLeft.toFixed(1)} ms)`,
    );
    runs.push(run);
    transitions.length = 0;
  }
  await deps.ehr.idle();
  return runs;
}

async function main(): Promise<void> {
  const database = await createDatabase();
  cleanups.push(() => database.drop());
  const prefix = `bench:${randomBytes(6).toString('hex')}:`;
  cleanups.push(() => deleteRedisPrefix(prefix));
  const peer = await startFhirPeer(BEARER, settings.patients);
  cleanups.push(() => peer.stop());
  console.log(`FHIR server ${peer.baseUrl}, replay ${peer.replayUrl} (pid ${String(peer.pid)})`);
  const deps = await service(peer.replayUrl, database.url, prefix);
  const caller = await clinician(deps);
  const paths = await summaryPaths(deps, peer, caller);
  const load = loadavg()[0] ?? Number.NaN;
  console.log('against the replay server');
  const latencies = await interleaved(
    [...ways(deps, peer.replayUrl, caller, paths), ...auditWays(deps, caller)],
    peer.patientIds,
    settings.rounds,
    settings.warmUp,
  );
  await peer.forget();
  console.log('against the FHIR server itself');
  const medplum = await service(peer.baseUrl, database.url, prefix);
  const full = ways(medplum, peer.baseUrl, caller, paths);
  const slow = await interleaved(
    [full[0], full[4], full[5]].filter((w) => w !== undefined),
    peer.patientIds,
    settings.slowRounds,
    settings.slowWarmUp,
  );
  await peer.forget();
  console.log('recovery to CLOSED');
  const runs = await recoveries(deps, peer, caller);
  await report({
    settings,
    latencies,
    slow,
    runs,
    machine: { cores: cpus().length, load, loadAfter: loadavg()[0] ?? Number.NaN },
    versions: await serverVersions(),
  });
}

await runBenchmark(ADMIN_DATABASE_URL, main, cleanUp);
