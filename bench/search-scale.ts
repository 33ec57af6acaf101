import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { LexicalState } from '../src/modules/knowledge/lexical/protocol.js';
import { corpus, questions } from './lib/chat-corpus.js';
import {
  SERVICE_ENV,
  login,
  seedDocuments,
  startServer,
  type ServerChild,
  type TurnResult,
} from './lib/chat-client.js';
import { concurrentPart, stats, type Stats } from './lib/chat-parts.js';
import type { LoopDelay } from './lib/chat-server.js';
import { startHealthProbe } from './lib/health-probe.js';
import {
  ADMIN_DATABASE_URL,
  REDIS_URL,
  createDatabase,
  deleteRedisPrefix,
} from './lib/fixtures.js';
import { num, runBenchmark, writeSection } from './lib/sections.js';

/**
 * `make bench-search` (issue 24): the knowledge-base search at scale, through the API of the
 * service in a child process, on the embedded default (PGlite, no Redis) and on PostgreSQL +
 * Redis, at each size of BENCH_SIZES chunks (synthetic guideline text, bench/lib/chat-corpus.ts,
 * uploaded through the admin route). For each:
 *   - indexing: chunks a second over the whole upload, and the lexical index's size;
 *   - one client: GET /api/admin/kb/search (a new question each time, past the cache) and
 *     GET /health timed in the same loop, the floor;
 *   - 16 clients searching for BENCH_SECONDS: searches a second, with GET /health timed by a
 *     17th client meanwhile;
 *   - 200 chat turns started at once (20 users x 10 sockets), against one turn alone: first chunk,
 *     turns without passages (KB_TIMEOUT) or refused (SERVICE_UNAVAILABLE), GET /health meanwhile.
 * Writes the "Retrieval at scale" section of BENCHMARKS.md and bench/results/search-scale.json.
 * Knobs: BENCH_SIZES (20000,200000), BENCH_BACKENDS (pglite,postgres), BENCH_SEARCHES (300),
 * BENCH_SECONDS (15), BENCH_CLIENTS (16), BENCH_BURSTS (3), BENCH_WRITE=0, BENCH_RENDER=<json>.
 */

const settings = {
  sizes: (process.env.BENCH_SIZES ?? '20000,200000').split(',').map(Number),
  backends: (process.env.BENCH_BACKENDS ?? 'pglite,postgres').split(',') as Backend[],
  searches: num('BENCH_SEARCHES', 300),
  seconds: num('BENCH_SECONDS', 15),
  clients: num('BENCH_CLIENTS', 16),
  /** Bursts of 200 turns, one after the other: one burst's p99 varied by +-0.5 s between runs. */
  bursts: num('BENCH_BURSTS', 3),
  write: process.env.BENCH_WRITE !== '0',
};
type Backend = 'pglite' | 'postgres';

const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS = path.join(ROOT, 'bench', 'results');

interface Run {
  backend: Backend;
  chunks: number;
  documents: number;
  seedSeconds: number;
  /** The first search after seeding: the lexical index built (or caught up) before it answers. */
  firstSearchMs: number;
  /**
   * After the first search, until the dense copy's approximate graph held every row (null: no
   * graph, below VECTOR_INDEX_APPROXIMATE_FROM). The measures start after it.
   */
  graphLinkedMs?: number | null;
  lexical: LexicalState | null;
  rssBytes: number;
  search: Stats;
  healthAlone: Stats;
  concurrent: {
    searchesPerSecond: number;
    search: Stats;
    /** From a probe process of its own (bench/lib/health-probe.ts). */
    health: Stats;
    /** From the load generator's process, as runs before 2026-11-28 11:40 UTC measured it. */
    healthInLoad?: Stats;
    /** The service's own event-loop delay meanwhile, ms. */
    loop?: LoopDelay;
    errors: number;
  };
  burst: {
    alone: Stats;
    /** Over the turns of every burst. */
    firstChunk: Stats;
    /** Each burst's own p99, in order. */
    perBurstP99?: number[];
    withoutPassages: number;
    refused: number;
    turns: number;
    health: Stats;
    healthInLoad?: Stats;
    loop?: LoopDelay;
    /** The turns' steps, by name (bench/lib/chat-server.ts spans): alone, and in the burst. */
    aloneSteps: Record<string, Stats>;
    steps: Record<string, Stats>;
    /** When each step started in the burst, ms from the sends. */
    startedAt?: Record<string, Stats>;
  };
  load: number;
  /** Share of this machine's CPU time its hypervisor gave to others (steal), while seeding and measuring. */
  stolen?: { seeding: number; measures: number };
}

const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) {
    await fn().catch((err: unknown) => {
      console.error('clean-up step failed:', err);
    });
  }
}

/** A question the search cache has not seen: the nonce is a word no chunk holds. */
const fresh = (q: string, i: number, tag: string) => `${q} ref${tag}x${String(i)}`;

async function timed(url: string, token?: string): Promise<{ ms: number; ok: boolean }> {
  const start = performance.now();
  const res = await fetch(url, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  await res.arrayBuffer();
  return { ms: performance.now() - start, ok: res.ok };
}

const searchUrl = (base: string, q: string) =>
  `${base}/api/admin/kb/search?${new URLSearchParams({ q, limit: '5' }).toString()}`;

/** GET /health every `everyMs` until `stop()`; answers the timings. */
function healthProbe(base: string, everyMs: number) {
  const times: number[] = [];
  const state = { running: true };
  const done = (async () => {
    while (state.running) {
      times.push((await timed(`${base}/health`)).ms);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    stop: async () => {
      state.running = false;
      await done;
      return stats(times);
    },
  };
}

async function measure(
  server: ServerChild,
  token: string,
  tag: string,
  password: string,
): Promise<
  Pick<Run, 'firstSearchMs' | 'graphLinkedMs' | 'search' | 'healthAlone' | 'concurrent' | 'burst'>
> {
  const asked = questions(settings.searches, 7);
  const first = await timed(searchUrl(server.base, fresh('metformin dose', 0, tag)), token);
  const graphLinkedMs = await graphLinked(server);
  // One client: a search, then /health, in one loop.
  const search: number[] = [];
  const health: number[] = [];
  for (const [i, q] of asked.entries()) {
    search.push((await timed(searchUrl(server.base, fresh(q, i, `${tag}a`)), token)).ms);
    health.push((await timed(`${server.base}/health`)).ms);
  }
  // 16 clients for BENCH_SECONDS, /health probed meanwhile (from its own process, and from here).
  const probe = await startHealthProbe(server.base, 20);
  const probeHere = healthProbe(server.base, 20);
  await server.call('loop');
  const until = performance.now() + settings.seconds * 1000;
  const each: number[] = [];
  let errors = 0;
  let n = 0;
  await Promise.all(
    Array.from({ length: settings.clients }, async () => {
      while (performance.now() < until) {
        const i = n++;
        const q = asked[i % asked.length] ?? '';
        const r = await timed(searchUrl(server.base, fresh(q, i, `${tag}b`)), token);
        if (r.ok) each.push(r.ms);
        else errors++;
      }
    }),
  );
  const concurrentLoop = await server.call('loop');
  logLoop(`${tag}: 16 clients`, concurrentLoop);
  const [concurrentHealth, concurrentHealthHere] = await Promise.all([
    probe.stop(),
    probeHere.stop(),
  ]);
  // 200 turns at once, /health probed meanwhile.
  const burstProbe = await startHealthProbe(server.base, 20);
  const burstProbeHere = healthProbe(server.base, 20);
  const burst = await concurrentPart(server, {
    users: 20,
    perUser: 10,
    bursts: settings.bursts,
    alone: 10,
    password,
    tag,
  });
  const burstLoop = await server.call('loop');
  logLoop(`${tag}: burst`, burstLoop);
  const [burstHealth, burstHealthHere] = await Promise.all([
    burstProbe.stop(),
    burstProbeHere.stop(),
  ]);
  const turns = burst.bursts.flatMap((b) => b.turns);
  const isRefused = (t: TurnResult) => t.errors.includes('SERVICE_UNAVAILABLE');
  const firstChunks = (of: TurnResult[]) =>
    of.filter((t) => !isRefused(t)).map((t) => t.firstChunkMs);
  const refused = turns.filter(isRefused);
  const answered = turns.filter((t) => !isRefused(t));
  return {
    firstSearchMs: first.ms,
    graphLinkedMs,
    search: stats(search),
    healthAlone: stats(health),
    concurrent: {
      searchesPerSecond: each.length / settings.seconds,
      search: stats(each),
      health: concurrentHealth,
      healthInLoad: concurrentHealthHere,
      loop: concurrentLoop,
      errors,
    },
    burst: {
      alone: stats(burst.alone.map((t) => t.firstChunkMs)),
      perBurstP99: burst.bursts.map((b) => stats(firstChunks(b.turns)).p99),
      firstChunk: stats(firstChunks(turns)),
      withoutPassages: answered.filter((t) => t.errors.includes('KB_TIMEOUT')).length,
      refused: refused.length,
      turns: turns.length,
      health: burstHealth,
      healthInLoad: burstHealthHere,
      loop: burstLoop,
      aloneSteps: burst.aloneSteps,
      steps: burst.bursts[0]?.steps ?? {},
      startedAt: burst.bursts[0]?.startedAt ?? {},
    },
  };
}

async function runOne(backend: Backend, size: number): Promise<Run> {
  const tag = `${backend}${String(size)}`;
  const dir = mkdtempSync(path.join(tmpdir(), 'mas-bench-search-'));
  cleanups.push(() => {
    rmSync(dir, { recursive: true, force: true });
    return Promise.resolve();
  });
  const password = `bench ${randomBytes(12).toString('hex')} pass`;
  const admin = { email: `search-bench.${String(process.pid)}@example.org`, password };
  const env: Record<string, string> = {
    ...SERVICE_ENV,
    HOST: '127.0.0.1',
    DATA_DIR: dir,
    JWT_SECRET: randomBytes(48).toString('base64url'),
    BOOTSTRAP_ADMIN_EMAIL: admin.email,
    BOOTSTRAP_ADMIN_PASSWORD: admin.password,
  };
  if (backend === 'postgres') {
    const db = await createDatabase();
    cleanups.push(() => db.drop());
    const prefix = `mas_bench_${randomBytes(5).toString('hex')}:`;
    cleanups.push(() => deleteRedisPrefix(prefix));
    Object.assign(env, { DATABASE_URL: db.url, REDIS_URL, REDIS_PREFIX: prefix });
  }
  mkdirSync(RESULTS, { recursive: true });
  const server = await startServer(env, path.join(RESULTS, `search-${tag}.log`));
  cleanups.push(() => server.stop());
  const token = await login(server.base, admin.email, admin.password);
  const docs = corpus(size);
  const chunks = docs.reduce((sum, d) => sum + d.chunks, 0);
  console.log(`${tag}: seeding ${String(docs.length)} documents, ${String(chunks)} chunks`);
  const seedStart = cpuTimes();
  const seedSeconds = await seedDocuments(server, token, docs);
  console.log(`${tag}: seeded in ${seedSeconds.toFixed(0)} s`);
  const load = loadavg()[0] ?? 0;
  const measureStart = cpuTimes();
  const measured = await measure(server, token, tag, password);
  const stolen = {
    seeding: stolenShare(seedStart, measureStart),
    measures: stolenShare(measureStart, cpuTimes()),
  };
  const lexical = await server.call('lexical');
  const memory = await server.call('memory');
  await server.stop();
  return {
    backend,
    chunks,
    documents: docs.length,
    seedSeconds,
    lexical,
    rssBytes: memory.rss,
    load,
    stolen,
    ...measured,
  };
}

/** The machine's CPU time counters (/proc/stat, all CPUs): total and stolen (given to other guests). */
function cpuTimes(): { total: number; steal: number } {
  try {
    const fields =
      readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ??
      [];
    // user nice system idle iowait irq softirq steal (guest time is counted in user already)
    return { total: fields.slice(0, 8).reduce((a, b) => a + b, 0), steal: fields[7] ?? 0 };
  } catch {
    return { total: Number.NaN, steal: Number.NaN };
  }
}

const stolenShare = (
  from: { total: number; steal: number },
  to: { total: number; steal: number },
) => (to.steal - from.steal) / (to.total - from.total);

/**
 * Waits until the dense copy links its last row into its graph (searches scan every row until
 * then), at most 10 minutes; how long that took, or null when the copy keeps no graph.
 */
async function graphLinked(server: ServerChild): Promise<number | null> {
  const started = performance.now();
  for (;;) {
    const status = await server.call('dense');
    if (status === null || (status.ranking === 'exact' && status.waitingRows === 0)) return null;
    if (status.waitingRows === 0) return performance.now() - started;
    if (performance.now() - started > 600_000) throw new Error('the dense graph was not linked');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '–');

/** Each burst's p99 in seconds, when there was more than one. */
function eachBurst(p99s: number[] | undefined): string {
  if (p99s === undefined || p99s.length < 2) return '';
  return ` (${p99s.map((ms) => f(ms / 1000)).join(', ')})`;
}

function logLoop(what: string, loop: LoopDelay): void {
  const gc = loop.gc;
  console.log(
    `${what}: service event-loop delay p99 ${f(loop.p99)} ms, max ${f(loop.max)} ms` +
      (gc === undefined
        ? ''
        : `; GC ${String(gc.count)} pauses, ${f(gc.totalMs)} ms in all, longest ${f(gc.maxMs)} ms`),
  );
}

/** /health p99 from the probe process, from the load generator's, and the service's loop delay. */
function healthCell(m: { health: Stats; healthInLoad?: Stats; loop?: LoopDelay }): string {
  const here = m.healthInLoad === undefined ? '' : `, ${f(m.healthInLoad.p99)}`;
  const loop = m.loop === undefined ? '' : ` (${f(m.loop.p99)})`;
  return `${f(m.health.p99)}${here}${loop}`;
}

function render(date: string, runs: Run[]): string {
  const rows = runs.map((r) => {
    const perChunk = (bytes: number | undefined) => f((bytes ?? Number.NaN) / r.chunks, 0);
    return {
      name: `${r.backend}, ${r.chunks.toLocaleString('en')} chunks`,
      r,
      perChunk,
    };
  });
  const lines = [
    '## Retrieval at scale (issue 24)',
    '',
    `- Command: \`make bench-search\` (\`bench/search-scale.ts\`), ${date}, load average at the start of each measure and the share of CPU time stolen by the hypervisor (seeding, measures) in the table`,
    `- The service in a child process as \`make run\` starts it (embedded: PGlite and no Redis) or on PostgreSQL + Redis; documents uploaded through the admin route; every question new to the search cache (a nonce word no chunk holds). ${String(settings.searches)} searches one at a time; ${String(settings.clients)} clients for ${String(settings.seconds)} s; 200 turns at once (20 users x 10 sockets) after 10 turns alone, ${settings.bursts === 1 ? 'once' : `${String(settings.bursts)} times one after the other (the first-chunk figures over all their turns, /health over all of them)`}.`,
    '',
    '| backend, chunks | load | CPU stolen % (seeding, measures) | indexing chunks/s | first search ms (graph linked after, s) | search p50 / p99 ms | GET /health p50 / p99 ms (same loop) | 16 clients: searches/s | /health p99 ms meanwhile: probe process, load generator (service event-loop delay p99) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      ({ name, r }) =>
        `| ${name} | ${f(r.load)} | ${r.stolen === undefined ? '–' : `${f(r.stolen.seeding * 100, 0)}, ${f(r.stolen.measures * 100, 0)}`} | ${f(r.chunks / r.seedSeconds, 0)} | ${f(r.firstSearchMs, 0)}${typeof r.graphLinkedMs === 'number' ? ` (${f(r.graphLinkedMs / 1000)})` : ''} | ${f(r.search.p50)} / ${f(r.search.p99)} | ${f(r.healthAlone.p50, 2)} / ${f(r.healthAlone.p99, 2)} | ${f(r.concurrent.searchesPerSecond, 0)}${r.concurrent.errors > 0 ? ` (${String(r.concurrent.errors)} errors)` : ''} | ${healthCell(r.concurrent)} |`,
    ),
    '',
    '| backend, chunks | 200 turns: first chunk p50 / p99 ms (p99 of each burst, s) | one turn alone p50 ms | turns without passages | turns refused (SERVICE_UNAVAILABLE) | /health p99 ms during the burst: probe process, load generator (service event-loop delay p99) | lexical index: postings B/chunk, thread heap B/chunk | service RSS MB |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      ({ name, r, perChunk }) =>
        `| ${name} | ${f(r.burst.firstChunk.p50, 0)} / ${f(r.burst.firstChunk.p99, 0)}${eachBurst(r.burst.perBurstP99)} | ${f(r.burst.alone.p50, 0)} | ${String(r.burst.withoutPassages)} of ${String(r.burst.turns - r.burst.refused)} | ${String(r.burst.refused)} of ${String(r.burst.turns)} | ${healthCell(r.burst)} | ${perChunk(r.lexical?.postingBytes)}, ${perChunk(r.lexical?.heapBytes)} | ${f(r.rssBytes / 2 ** 20, 0)} |`,
    ),
    '',
    'Goals (issue 24): search p50 <= 10 ms at 20,000 chunks and <= 30 ms at 200,000; >= 200 searches/s with 16 clients; no turn without its passages because of load and first chunk p99 <= 2 s in the burst; GET /health p99 <= 20 ms while 16 clients search and during the burst; indexing not below about 580 chunks/s.',
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const saved = process.env.BENCH_RENDER;
  let report: { date: string; runs: Run[] };
  if (saved !== undefined) {
    report = JSON.parse(readFileSync(saved, 'utf8')) as typeof report;
  } else {
    const date = new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
    const runs: Run[] = [];
    for (const size of settings.sizes) {
      for (const backend of settings.backends) {
        runs.push(await runOne(backend, size));
        await cleanUp();
        writeFileSync(path.join(RESULTS, 'search-scale.json'), JSON.stringify({ date, runs }));
      }
    }
    report = { date, runs };
  }
  await writeSection('search-scale', render(report.date, report.runs), settings.write);
}

await runBenchmark(ADMIN_DATABASE_URL, main, cleanUp);
