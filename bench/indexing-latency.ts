import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { MAX_UPLOAD_BYTES } from '../src/modules/knowledge/upload.js';
import { largePdf } from '../test/helpers/pdf.js';
import {
  ADMIN_DATABASE_URL,
  REDIS_URL,
  createDatabase,
  deleteRedisPrefix,
  serverVersions,
} from './lib/fixtures.js';
import { startPaced, type PacedResult } from './lib/paced.js';
import { freePort, memory, sleep, startServer, type Server } from './lib/processes.js';
import { num, runBenchmark, writeSection } from './lib/sections.js';
import { render, type Indexed, type Report } from './lib/indexing-report.js';

/**
 * `make bench-indexing` (issue 9, item 2: indexing never freezes the API). The built service on
 * PostgreSQL and Redis, as deployed; /health and an authenticated read (GET /api/auth/me) under a
 * steady open-loop load, first with nothing to index, then, in the same run, while a text file
 * at the upload limit and a 200-page PDF are uploaded and indexed. Writes the indexing-latency
 * section of BENCHMARKS.md. Knobs: BENCH_IDLE_SECONDS (30), BENCH_HEALTH_RATE (200 req/s),
 * BENCH_ME_RATE (100 req/s), BENCH_TEXT_BYTES (the upload limit less 1 KiB), BENCH_PAGES (200),
 * BENCH_WRITE=0 (do not touch BENCHMARKS.md).
 */

const settings = {
  idleSeconds: num('BENCH_IDLE_SECONDS', 30),
  healthRate: num('BENCH_HEALTH_RATE', 200),
  meRate: num('BENCH_ME_RATE', 100),
  textBytes: num('BENCH_TEXT_BYTES', MAX_UPLOAD_BYTES - 1024),
  pages: num('BENCH_PAGES', 200),
  write: process.env.BENCH_WRITE !== '0',
};
const ROOT = path.resolve(import.meta.dirname, '..');
const SERVICE_ENTRY = path.join(ROOT, 'dist', 'src', 'main.js');
const RESULTS_DIR = path.join(ROOT, 'bench', 'results');
const ADMIN = {
  email: 'bench-admin@example.org',
  password: `Bench-${randomBytes(9).toString('hex')}`,
};

const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) {
    await fn().catch((err: unknown) => {
      console.error('clean-up step failed:', err);
    });
  }
}

/** Guideline prose from eval/corpus, repeated with numbered parts up to `bytes` (UTF-8). */
function corpusText(bytes: number): Buffer {
  const dir = path.join(ROOT, 'eval', 'corpus');
  const sources = readdirSync(dir)
    .filter((f) => f.endsWith('.txt'))
    .sort()
    .map((f) => readFileSync(path.join(dir, f), 'utf8'));
  const parts: string[] = [];
  let size = 0;
  for (let n = 1; size < bytes; n++) {
    const part = `# Part ${n}\n\n${sources[n % sources.length] ?? ''}\n\n`;
    parts.push(part);
    size += Buffer.byteLength(part);
  }
  return Buffer.from(parts.join('')).subarray(0, bytes);
}

async function api<T>(server: Server, route: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(server.url + route, init);
  const body = (await res.json()) as { data: T };
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${route}: ${res.status}`);
  return body.data;
}

const jsonPost = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

async function tokens(server: Server): Promise<{ admin: string; user: string }> {
  const user = {
    email: `bench-${randomBytes(6).toString('hex')}@example.org`,
    password: ADMIN.password,
  };
  await api(server, '/api/auth/register', jsonPost({ ...user, full_name: 'Benchmark User' }));
  const login = (who: typeof user) =>
    api<{ access_token: string }>(server, '/api/auth/login', jsonPost(who));
  return { admin: (await login(ADMIN)).access_token, user: (await login(user)).access_token };
}

/** Uploads one document over HTTP and waits for its job; the time includes the upload. */
async function index(server: Server, token: string, file: Buffer, name: string): Promise<Indexed> {
  const started = performance.now();
  const form = new FormData();
  form.set('title', name);
  form.set('category', 'guidelines');
  form.set('file', new Blob([file]), name);
  const auth = { authorization: `Bearer ${token}` };
  const doc = await api<{ id: string; job: { id: string } }>(server, '/api/admin/kb/documents', {
    method: 'POST',
    headers: auth,
    body: form,
  });
  for (;;) {
    await sleep(500);
    const job = await api<{ state: string; error_details: unknown }>(
      server,
      `/api/admin/kb/jobs/${doc.job.id}`,
      { headers: auth },
    );
    if (job.state === 'failed') throw new Error(`${name}: ${JSON.stringify(job.error_details)}`);
    if (job.state !== 'completed') continue;
    const indexed = await api<{ page_count: number; chunk_count: number }>(
      server,
      `/api/admin/kb/documents/${doc.id}`,
      { headers: auth },
    );
    const seconds = (performance.now() - started) / 1000;
    return {
      name,
      bytes: file.length,
      pages: indexed.page_count,
      chunks: indexed.chunk_count,
      seconds,
    };
  }
}

/** Both loads at once until `until` settles. */
async function measure<T>(server: Server, userToken: string, until: Promise<T>) {
  const health = startPaced({ url: `${server.url}/health`, rate: settings.healthRate });
  const me = startPaced({
    url: `${server.url}/api/auth/me`,
    rate: settings.meRate,
    headers: { authorization: `Bearer ${userToken}` },
  });
  const settled = await until.then(
    (value) => ({ value, error: null }),
    (error: unknown) => ({ value: null, error }),
  );
  const results: [PacedResult, PacedResult] = [await health.stop(), await me.stop()];
  if (settled.error !== null) {
    throw settled.error instanceof Error
      ? settled.error
      : new Error('indexing failed', { cause: settled.error });
  }
  return { health: results[0], me: results[1], value: settled.value };
}

/** The longest `route` request the service's access log shows between two instants (ms). */
function slowestLogged(logFile: string, route: string, from: number, to: number): number {
  let slowest = 0;
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { route?: string; ms?: number; time?: string };
    const at = Date.parse(entry.time ?? '');
    if (entry.route === route && at >= from && at <= to) slowest = Math.max(slowest, entry.ms ?? 0);
  }
  return slowest;
}

async function main(): Promise<void> {
  if (!existsSync(SERVICE_ENTRY)) throw new Error(`${SERVICE_ENTRY} missing: run npm run build`);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const date = new Date();
  const load = loadavg()[0] ?? 0;
  const versions = await serverVersions();
  const database = await createDatabase();
  cleanups.push(() => database.drop());
  const redisPrefix = `mas_bench_${randomBytes(5).toString('hex')}:`;
  cleanups.push(() => deleteRedisPrefix(redisPrefix));
  const dataDir = mkdtempSync(path.join(tmpdir(), 'mas-bench-indexing-'));
  cleanups.push(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await Promise.resolve();
  });
  const env = {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    RATE_LIMIT_HEALTH_PER_MINUTE: '100000000',
    // Prose at the upload limit makes about 80,000 chunks: the default budget (20,000) would
    // fail it early instead of indexing it.
    KB_MAX_CHUNKS: '200000',
  };
  const port = await freePort();
  const server = await startServer({
    name: 'service-indexing',
    args: ['--enable-source-maps', SERVICE_ENTRY],
    env: {
      PATH: process.env.PATH ?? '',
      ...env,
      PORT: String(port),
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      JWT_SECRET: randomBytes(48).toString('base64url'),
      DATA_DIR: dataDir,
      BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
      BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
    },
    port,
    logFile: path.join(RESULTS_DIR, 'service-indexing.log'),
    readyPath: '/ready',
  });
  cleanups.push(() => server.stop());
  const { admin, user } = await tokens(server);
  const text = corpusText(settings.textBytes);
  const pdf = await largePdf(settings.pages);
  console.log(`text ${(text.length / 2 ** 20).toFixed(1)} MiB, PDF ${settings.pages} pages`);

  await measure(server, user, sleep(3000)); // warm-up
  const idle = await measure(server, user, sleep(settings.idleSeconds * 1000));
  console.log(
    `idle: /health p99 ${idle.health.p99.toFixed(1)} ms, me p99 ${idle.me.p99.toFixed(1)} ms`,
  );
  const busyFrom = Date.now();
  const busy = await measure(
    server,
    user,
    Promise.all([
      index(server, admin, text, 'guidelines-50mb.txt'),
      index(server, admin, pdf, `guideline-${settings.pages}-pages.pdf`),
    ]),
  );
  const documents = busy.value ?? [];
  const serverMeMaxMs = slowestLogged(server.logFile, '/api/auth/me', busyFrom, Date.now());
  console.log(
    `indexing: /health p99 ${busy.health.p99.toFixed(1)} ms, me p99 ${busy.me.p99.toFixed(1)} ms`,
  );
  const report: Report = {
    date,
    settings,
    machine: { cpu: cpus()[0]?.model ?? '?', cores: cpus().length, memGiB: totalmem() / 2 ** 30 },
    load,
    node: process.version,
    versions,
    env,
    idle,
    busy,
    documents,
    peakRssMiB: memory(server.pid).peakMiB,
    serverMeMaxMs,
  };
  await writeSection('indexing-latency', render(report), settings.write);
}

await runBenchmark(ADMIN_DATABASE_URL, main, cleanUp);
