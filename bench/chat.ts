import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { withAdminClient } from '../test/helpers/local-servers.js';
import { corpus } from './lib/chat-corpus.js';
import { login, seedDocuments, startServer } from './lib/chat-client.js';
import { concurrentPart, idlePart, retrievalPart } from './lib/chat-parts.js';
import { render, type ChatReport, type VariantResult } from './lib/chat-report.js';
import {
  ADMIN_DATABASE_URL,
  REDIS_URL,
  createDatabase,
  deleteRedisPrefix,
  serverVersions,
} from './lib/fixtures.js';
import { num, runBenchmark, writeSection } from './lib/sections.js';
import { SERVICE_ENV } from './lib/chat-client.js';

/**
 * `make bench-chat`: the chat engine (DECISIONS 4) through real sockets on a service in a child
 * process (bench/lib/chat-server.ts), on a scratch PostgreSQL database and a Redis key prefix of
 * its own, both removed at the end. Three parts, each against a baseline of the same run:
 *   1. the offline extractive model over a 20,000-chunk knowledge base: time to the first chunk
 *      and to message_done of one turn at a time, against SearchService.search alone;
 *   2. 10,000 idle sockets on a fresh instance: RSS per socket, and ping round trips against one
 *      socket alone;
 *   3. 200 turns started at once (20 users x 10 sockets): time to the first chunk against one turn
 *      alone.
 * Writes the chat section of BENCHMARKS.md, and the raw figures to bench/results/chat.json.
 * Knobs: BENCH_CHUNKS (20000), BENCH_QUESTIONS (200), BENCH_SOCKETS (10000), BENCH_PINGS (1000),
 * BENCH_PING_RATE (100 a second), BENCH_IDLE_ROUNDS (3), BENCH_USERS (20),
 * BENCH_SOCKETS_PER_USER (10), BENCH_BURSTS (3), BENCH_VARIANTS=0 (skip part 3's variants),
 * BENCH_WRITE=0 (leave BENCHMARKS.md alone),
 * BENCH_RENDER=<json> (only render saved figures).
 */

const settings = {
  chunks: num('BENCH_CHUNKS', 20_000),
  questions: num('BENCH_QUESTIONS', 200),
  warmup: num('BENCH_WARMUP', 10),
  sockets: num('BENCH_SOCKETS', 10_000),
  pings: num('BENCH_PINGS', 1000),
  pingRate: num('BENCH_PING_RATE', 100),
  idleRounds: num('BENCH_IDLE_ROUNDS', 3),
  users: num('BENCH_USERS', 20),
  perUser: num('BENCH_SOCKETS_PER_USER', 10),
  bursts: num('BENCH_BURSTS', 3),
  alone: num('BENCH_ALONE', 20),
  variants: process.env.BENCH_VARIANTS !== '0',
  write: process.env.BENCH_WRITE !== '0',
};
/** Part 3 again, each on an instance of its own (BENCH_VARIANTS=0 skips them). */
const VARIANTS: Omit<VariantResult, 'result'>[] = [
  {
    name: 'fresh-once-a-minute',
    what: 'the vector index checked for freshness at most once a minute, a setting',
    env: { VECTOR_INDEX_MAX_STALENESS_MS: '60000' },
  },
  {
    name: 'four-searches',
    what:
      'at most 4 chat searches at once, the others waiting their turn; a what-if, done by a ' +
      'semaphore the benchmark wraps around `SearchService.search`, not a setting of the service',
    env: { BENCH_SEARCH_CONCURRENCY: '4' },
  },
];
const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS = path.join(ROOT, 'bench', 'results');

const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) {
    await fn().catch((err: unknown) => {
      console.error('clean-up step failed:', err);
    });
  }
}

/** The code measured: the commit, and the files of src/ that differed from it. */
function codeVersion(): { commit: string; changed: string[] } {
  const git = (args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  return {
    commit: git(['rev-parse', '--short=10', 'HEAD']).trim(),
    changed: git(['status', '--porcelain', '--', 'src'])
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => line.slice(3)),
  };
}

async function run(): Promise<ChatReport> {
  const date = new Date().toISOString();
  const code = codeVersion();
  const load: Record<string, number> = { start: loadavg()[0] ?? 0 };
  const dir = mkdtempSync(path.join(tmpdir(), 'mas-bench-chat-'));
  cleanups.push(() => {
    rmSync(dir, { recursive: true, force: true });
    return Promise.resolve();
  });
  const db = await createDatabase();
  cleanups.push(() => db.drop());
  const prefix = `mas_bench_${randomBytes(5).toString('hex')}:`;
  cleanups.push(() => deleteRedisPrefix(prefix));
  const password = `bench ${randomBytes(12).toString('hex')} pass`;
  const admin = { email: `chat-bench-admin.${String(process.pid)}@example.org`, password };
  const env = {
    ...SERVICE_ENV,
    HOST: '127.0.0.1',
    DATABASE_URL: db.url,
    REDIS_URL,
    REDIS_PREFIX: prefix,
    JWT_SECRET: randomBytes(48).toString('base64url'),
    BOOTSTRAP_ADMIN_EMAIL: admin.email,
    BOOTSTRAP_ADMIN_PASSWORD: admin.password,
  };
  mkdirSync(RESULTS, { recursive: true });
  const start = async (name: string, extra: Record<string, string> = {}) => {
    const server = await startServer(
      { ...env, ...extra, DATA_DIR: path.join(dir, name) },
      path.join(RESULTS, `chat-${name}.log`),
    );
    cleanups.push(() => server.stop());
    return server;
  };

  const server = await start('service');
  const adminToken = await login(server.base, admin.email, admin.password);
  const docs = corpus(settings.chunks);
  const chunks = docs.reduce((sum, d) => sum + d.chunks, 0);
  console.log(`seeding ${String(docs.length)} documents, ${String(chunks)} chunks`);
  const seedSeconds = await seedDocuments(server, adminToken, docs);
  const active = await withAdminClient(db.url, async (c) => {
    await c.query('vacuum (analyze)');
    const res = await c.query<{ n: number }>(
      'select count(*)::int as n from kb_chunks where active and not superseded',
    );
    return res.rows[0]?.n ?? 0;
  });
  console.log(`seeded in ${seedSeconds.toFixed(0)} s: ${String(active)} active chunks`);

  load.retrieval = loadavg()[0] ?? 0;
  const turns = await retrievalPart(server, adminToken, settings.questions, settings.warmup);
  load.concurrent = loadavg()[0] ?? 0;
  const burstOptions = {
    users: settings.users,
    perUser: settings.perUser,
    bursts: settings.bursts,
    alone: settings.alone,
    password,
  };
  const concurrent = await concurrentPart(server, { ...burstOptions, tag: 'default' });
  await server.stop();
  // The same bursts on instances that differ in one setting each (see VARIANTS).
  const variants: VariantResult[] = [];
  for (const variant of settings.variants ? VARIANTS : []) {
    load[variant.name] = loadavg()[0] ?? 0;
    const other = await start(variant.name, variant.env);
    const result = await concurrentPart(other, { ...burstOptions, tag: variant.name });
    await other.stop();
    variants.push({ ...variant, result });
  }

  load.idle = loadavg()[0] ?? 0;
  const fresh = await start('idle');
  const idle = await idlePart(
    fresh,
    { email: `chat-bench-idle.${String(process.pid)}@example.org`, password },
    {
      sockets: settings.sockets,
      pings: settings.pings,
      rate: settings.pingRate,
      rounds: settings.idleRounds,
    },
  );
  await fresh.stop();
  load.end = loadavg()[0] ?? 0;
  return {
    date,
    code,
    load,
    versions: await serverVersions(),
    node: process.version,
    settings,
    env: SERVICE_ENV,
    seed: { documents: docs.length, chunks, active, seconds: seedSeconds },
    turns,
    idle,
    concurrent,
    variants,
  };
}

async function main(): Promise<void> {
  const saved = process.env.BENCH_RENDER;
  let report: ChatReport;
  if (saved !== undefined) {
    report = JSON.parse(readFileSync(saved, 'utf8')) as ChatReport;
  } else {
    report = await run();
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(path.join(RESULTS, 'chat.json'), JSON.stringify(report));
  }
  await writeSection('chat', render(report), settings.write);
}

await runBenchmark(ADMIN_DATABASE_URL, main, cleanUp);
