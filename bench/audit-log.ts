import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase, type Db } from '../src/db/client.js';
import { runMigrations } from '../src/db/migrate.js';
import { createDeps, type Deps } from '../src/deps.js';
import { auditRepo } from '../src/modules/audit/repo.js';
import { VERIFY_BATCH } from '../src/modules/audit/service.js';
import { usersRepo } from '../src/modules/users/repo.js';
import { createLogger } from '../src/platform/logger.js';
import { appendChain } from '../test/helpers/audit-chain.js';
import {
  ADMIN_DATABASE_URL,
  REDIS_URL,
  createDatabase,
  deleteRedisPrefix,
  serverVersions,
} from './lib/fixtures.js';
import { num, prng, runBenchmark, table, writeSection } from './lib/sections.js';

/**
 * `make bench-audit` (issue 12): 100,000 valid chained audit entries, then (a) the CSV export
 * through the HTTP route (a listening server, a real HTTP client reading the stream and keeping
 * nothing): time, rows/s and peak RSS growth, against a plain keyset read of the same rows with the
 * pg driver in the same run; (b) the chain verification: time and entries/s, against just reading
 * the same rows in the same pages; (c) the list's filters on 100,000 entries, and their plans.
 * Server and client share this process, so the RSS figures cover both. Knobs: BENCH_ENTRIES
 * (100000), BENCH_LIST_REPEATS (30), BENCH_WRITE=0 (do not touch BENCHMARKS.md).
 */

const settings = {
  entries: num('BENCH_ENTRIES', 100_000),
  listRepeats: num('BENCH_LIST_REPEATS', 30),
  write: process.env.BENCH_WRITE !== '0',
};
const LIST = '/api/admin/panel/audit-logs';
const ACTIONS = [
  'auth.login',
  'auth.login_failed',
  'auth.logout',
  'ehr.read',
  'ehr.write_failed',
  'user.updated',
  'user.deactivated',
  'kb.document.uploaded',
  'conversation.deleted',
];

const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) {
    await fn().catch((err: unknown) => {
      console.error('clean-up step failed:', err);
    });
  }
}

/** The 200 users the entries are by and about: the same in the seeding process and this one. */
function benchUsers(): string[] {
  const random = prng(20_261_125);
  const hex = (n: number) =>
    Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join('');
  return Array.from({ length: 200 }, () => `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`);
}

/** Valid chained entries after the chain's end, hashed with entryHash, inserted 1,000 a statement. */
async function seed(db: Db, count: number, users: string[]): Promise<void> {
  const random = prng(20_261_124);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const start = Date.now() - count * 1000;
  await appendChain(db, count, (i) => {
    const action = pick(ACTIONS);
    const actor = pick(users);
    return {
      id: randomUUID(),
      timestamp: new Date(start + i * 1000),
      action,
      actorId: actor,
      actorEmail: `${actor.slice(0, 8)}@clinic.example`,
      resourceType: action.startsWith('user.') ? 'user' : (action.split('.')[0] ?? null),
      resourceId: action.startsWith('user.') ? pick(users) : randomUUID(),
      success: !action.endsWith('_failed'),
      ip: `10.0.${String(i % 256)}.${String((i >> 8) % 256)}`,
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)',
      requestId: randomUUID(),
      details: action === 'user.updated' ? { fields: ['full_name', 'email'] } : { n: i },
    };
  });
}

interface Measured<T> {
  value: T;
  ms: number;
  /** RSS at the start of the run, and its peak growth over the run (MiB). */
  startMiB: number;
  peakMiB: number;
}

/** The best time and the highest peak of several runs. */
function bestOf<T>(runs: Measured<T>[]): Measured<T> {
  const fastest = runs.reduce((a, b) => (b.ms < a.ms ? b : a));
  const highest = runs.reduce((a, b) => (b.peakMiB > a.peakMiB ? b : a));
  return { ...fastest, startMiB: highest.startMiB, peakMiB: highest.peakMiB };
}

/** Peak RSS growth over `run`, sampled every 10 ms from its start (after a collection). */
async function peakRss<T>(run: () => Promise<T>): Promise<Measured<T>> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  const started = performance.now();
  try {
    const value = await run();
    peak = Math.max(peak, process.memoryUsage().rss);
    const ms = performance.now() - started;
    return { value, ms, startMiB: base / 2 ** 20, peakMiB: (peak - base) / 2 ** 20 };
  } finally {
    clearInterval(timer);
  }
}

/** Reads the export over HTTP, counting lines and bytes and keeping nothing. */
async function readExport(url: string, token: string): Promise<{ lines: number; bytes: number }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok || res.body === null) throw new Error(`export: ${String(res.status)}`);
  let [lines, bytes] = [0, 0];
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    const buffer = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    bytes += buffer.length;
    for (let at = buffer.indexOf(10); at >= 0; at = buffer.indexOf(10, at + 1)) lines += 1;
  }
  return { lines, bytes };
}

/** The baseline: the same rows in keyset pages of 1,000 with the pg driver, writing nothing. */
async function plainRead(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let [after, rows] = [0, 0];
    for (;;) {
      const page = await client.query<{ seq: string }>(
        'select * from audit_logs where seq > $1 order by seq limit 1000',
        [after],
      );
      rows += page.rows.length;
      const last = page.rows.at(-1);
      if (last === undefined || page.rows.length < 1000) return rows;
      after = Number(last.seq);
    }
  } finally {
    await client.end();
  }
}

/** Signs up an administrator through the API (registered, promoted, signed in); its token. */
async function adminToken(base: string, deps: Deps): Promise<string> {
  const email = `bench-${randomBytes(4).toString('hex')}@example.org`;
  const password = `Bench-${randomBytes(9).toString('hex')}`;
  const post = (route: string, body: unknown) =>
    fetch(base + route, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const reg = (await (
    await post('/api/auth/register', { email, password, full_name: 'Bench' })
  ).json()) as {
    data: { id: string };
  };
  await usersRepo.update(deps.database.db, reg.data.id, { adminRole: 'admin' });
  const login = (await (await post('/api/auth/login', { email, password })).json()) as {
    data: { access_token: string };
  };
  return login.data.access_token;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function listTimes(base: string, token: string, users: string[]) {
  const since = new Date(Date.now() - 20_000 * 1000).toISOString();
  const queries: [string, string][] = [
    ['no filter', 'limit=50'],
    ['action exact', 'action=ehr.read&limit=50'],
    ['action prefix', 'action=ehr.*&limit=50'],
    ['user_id', `user_id=${users[0] ?? ''}&limit=50`],
    ['since (last 20,000 s)', `since=${since}&limit=50`],
    ['prefix + since, page 20', `action=auth.*&since=${since}&limit=200&page=20`],
  ];
  const rows: (string | number)[][] = [];
  for (const [name, query] of queries) {
    const times: number[] = [];
    let total = 0;
    for (let i = 0; i < settings.listRepeats; i += 1) {
      const started = performance.now();
      const res = await fetch(`${base}${LIST}?${query}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      total = ((await res.json()) as { data: { total: number } }).data.total;
      times.push(performance.now() - started);
    }
    rows.push([
      name,
      `\`${query.replace(/[0-9a-f-]{36}|\d{4}-[\d:.TZ-]+/g, '…')}\``,
      total,
      median(times).toFixed(1),
    ]);
  }
  return rows;
}

/** The plan of each filter's page query (the repo's statements' shapes), first line with an index. */
async function plans(url: string, users: string[]): Promise<string[][]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const shapes: [string, string, unknown[]][] = [
      ['action exact', 'action = $1', ['ehr.read']],
      ['action prefix', 'action like $1', ['ehr.%']],
      [
        'user_id',
        "(actor_id = $1 or (resource_type = 'user' and resource_id = $2))",
        [users[0], users[0]],
      ],
    ];
    const out: string[][] = [];
    for (const [name, where, params] of shapes) {
      for (const kind of ['page', 'count'] as const) {
        const select = kind === 'page' ? 'select * ' : 'select count(*) ';
        const tail = kind === 'page' ? ' order by seq desc limit 50' : '';
        const res = await client.query<{ 'QUERY PLAN': string }>(
          `explain ${select}from audit_logs where ${where}${tail}`,
          params,
        );
        const plan = res.rows.map((r) => r['QUERY PLAN']).join('\n');
        const node =
          /(Index Only Scan|Index Scan Backward|Index Scan|Bitmap Heap Scan|Seq Scan)/.exec(
            plan,
          )?.[1] ?? '?';
        const indexes = [
          ...new Set(
            [...plan.matchAll(/(?:using|Bitmap Index Scan on) (audit_logs_\w+)/g)].map((m) => m[1]),
          ),
        ];
        out.push([
          `${name} (${kind})`,
          `${node}: ${indexes.map((i) => `\`${i ?? ''}\``).join(', ') || 'none'}`,
        ]);
      }
    }
    return out;
  } finally {
    await client.end();
  }
}

/** Reads the whole chain in the verifier's pages without checking anything: its baseline. */
async function readChain(deps: Deps): Promise<number> {
  let [after, rows] = [0, 0];
  for (;;) {
    const page = await auditRepo.pageAfter(deps.database.db, after, VERIFY_BATCH);
    rows += page.length;
    const last = page.at(-1);
    if (last === undefined || page.length < VERIFY_BATCH) return rows;
    after = last.seq;
  }
}

/** Best of `n` runs (ms), and the last value. */
async function best<T>(n: number, run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  let result: { ms: number; value: T } | undefined;
  for (let i = 0; i < n; i += 1) {
    const started = performance.now();
    const value = await run();
    const ms = performance.now() - started;
    if (result === undefined || ms < result.ms) result = { ms, value };
  }
  if (result === undefined) throw new Error('no run');
  return result;
}

const mib = (v: number) => v.toFixed(1);
const perSecond = (count: number, ms: number) =>
  Math.round((count / ms) * 1000).toLocaleString('en');

async function main(): Promise<void> {
  const date = new Date();
  const load = loadavg()[0] ?? 0;
  const versions = await serverVersions();
  const database = await createDatabase();
  cleanups.push(() => database.drop());
  const seedMs = await seedInChild(database.url);
  const redisPrefix = `mas_bench_${randomBytes(5).toString('hex')}:`;
  cleanups.push(() => deleteRedisPrefix(redisPrefix));
  const service = await startService(database.url, redisPrefix);
  cleanups.push(() => service.close());
  const { deps, base, token } = service;

  const users = benchUsers();
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query('vacuum analyze audit_logs');
  const total = Number(
    (await client.query<{ n: string }>('select count(*) as n from audit_logs')).rows[0]?.n,
  );
  await client.end();
  console.log(
    `seeded ${String(settings.entries)} entries in ${(seedMs / 1000).toFixed(1)} s; ${String(total)} in the chain`,
  );

  // (a) Export and baseline, each in a fresh process (RSS never shrinks, so whichever ran second
  // in one process would find the heap already grown), alternating, twice each.
  const runs = {
    baseline: [] as Measured<number>[],
    exported: [] as Measured<{ lines: number; bytes: number }>[],
  };
  for (let i = 0; i < 2; i += 1) {
    runs.baseline.push(await inChild<number>(['--baseline', database.url]));
    runs.exported.push(await inChild(['--export', database.url, redisPrefix]));
  }
  const baseline = bestOf(runs.baseline);
  const exported = bestOf(runs.exported);
  console.log(
    `baseline ${baseline.ms.toFixed(0)} ms +${mib(baseline.peakMiB)} MiB; export ${exported.ms.toFixed(0)} ms +${mib(exported.peakMiB)} MiB, ${String(exported.value.lines)} lines`,
  );

  // (b) Verification against reading the same pages.
  const read = await best(3, () => readChain(deps));
  const verified = await best(3, () => deps.audit.verify());
  if (!verified.value.valid) throw new Error(`chain broken: ${JSON.stringify(verified.value)}`);
  const viaHttp = await fetch(`${base}${LIST}/verify`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const httpResult = ((await viaHttp.json()) as { data: { checked: number; duration_ms: number } })
    .data;
  console.log(
    `read ${read.ms.toFixed(0)} ms; verify ${verified.ms.toFixed(0)} ms (${String(verified.value.checked)})`,
  );

  // (c) The list's filters.
  const lists = await listTimes(base, token, users);
  const planRows = await plans(database.url, users);

  const rows = exported.value.lines - 1;
  await writeSection(
    'audit-log',
    `## Audit log (issue 12)

\`npx tsx --expose-gc bench/audit-log.ts\` (\`make bench-audit\`), ${date.toISOString().slice(0, 16).replace('T', ' ')}
UTC. ${cpus()[0]?.model ?? '?'}, ${String(cpus().length)} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load ${load.toFixed(2)} at the start;
Node ${process.version}, PostgreSQL ${versions.postgres}, Redis ${versions.redis}. The service in
a process (\`buildApp\`, listening on 127.0.0.1) with the client reading over HTTP in the same
process, so RSS covers both. The entries are generated in a child process first; the export and its
baseline each run in a fresh process of their own (after a warm-up), twice each, alternating. RSS is
sampled every 10 ms; growth is over the RSS at the start of the run. ${settings.entries.toLocaleString('en')} valid chained entries (hashed with \`entryHash\`,
inserted 1,000 a statement in ${(seedMs / 1000).toFixed(1)} s), ${total.toLocaleString('en')} in the chain with the
administrator's own.

### CSV export (GET ${LIST}/export?format=csv, no filter)

${table(
  [
    '',
    'Rows',
    'Time (ms, best of 2)',
    'Rows/s',
    'RSS at start (MiB)',
    'Peak RSS growth (MiB, highest of 2)',
  ],
  [
    [
      'Baseline: keyset read of the same rows, pg driver, 1,000 a page, nothing written',
      baseline.value,
      baseline.ms.toFixed(0),
      perSecond(baseline.value, baseline.ms),
      mib(baseline.startMiB),
      mib(baseline.peakMiB),
    ],
    [
      `Export over HTTP (${(exported.value.bytes / 2 ** 20).toFixed(1)} MiB of CSV read and dropped)`,
      rows,
      exported.ms.toFixed(0),
      perSecond(rows, exported.ms),
      mib(exported.startMiB),
      mib(exported.peakMiB),
    ],
  ],
)}

Goal: peak RSS growth under 50 MB: ${exported.peakMiB * 1.048576 < 50 ? 'met' : 'NOT met'}. The export costs
${(exported.ms / baseline.ms).toFixed(1)}× the bare read: building the CSV text (neutralising and quoting
every cell, \`details\` as JSON) and sending it through the HTTP stream with back-pressure. The
baseline's process starts small (the pg driver only) and V8 grows its heap lazily while a page of
parsed rows after another is thrown away; the service's process starts with its heap already sized,
and the export holds one page of 1,000 entries and the CSV text of that page at a time.

### Chain verification (GET ${LIST}/verify)

${table(
  ['', 'Entries', 'Time (ms, best of 3)', 'Entries/s'],
  [
    [
      `Baseline: reading the chain in the verifier's pages (${VERIFY_BATCH.toLocaleString('en')} a query), no check`,
      read.value,
      read.ms.toFixed(0),
      perSecond(read.value, read.ms),
    ],
    [
      'AuditService.verify (next page read while this one is hashed)',
      verified.value.checked,
      verified.ms.toFixed(0),
      perSecond(verified.value.checked, verified.ms),
    ],
    [
      'The route, once (its `duration_ms`)',
      httpResult.checked,
      httpResult.duration_ms,
      perSecond(httpResult.checked, httpResult.duration_ms),
    ],
  ],
)}

Verification costs ${(verified.ms / read.ms).toFixed(1)}× reading: hashing (canonical JSON and SHA-256 of every
entry, in JS as \`hash.ts\` defines it) overlaps the next page's read.

### The list's filters (median of ${String(settings.listRepeats)} requests over HTTP)

${table(['Filter', 'Query', 'Total', 'Median (ms)'], lists)}

Plans (\`EXPLAIN\` of the page and count statements' shapes: the scan of audit_logs and the indexes it uses):

${table(['Statement', 'Plan'], planRows)}
`,
    settings.write,
  );
}

interface Service {
  deps: Deps;
  base: string;
  token: string;
  close(): Promise<void>;
}

/** The service on the benchmark's database, listening on 127.0.0.1, with an administrator. */
async function startService(url: string, redisPrefix: string): Promise<Service> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'mas-bench-audit-'));
  const config = loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    DATABASE_URL: url,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    JWT_SECRET: randomBytes(48).toString('base64url'),
  });
  const deps = await createDeps(config, createLogger(config));
  const { app } = await buildApp(deps);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening');
  const base = `http://127.0.0.1:${String(address.port)}`;
  return {
    deps,
    base,
    token: await adminToken(base, deps),
    close: async () => {
      await app.close();
      await deps.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `--export <url> <prefix>`: a fresh service process measuring one full export over HTTP. */
async function exportProcess(url: string, redisPrefix: string): Promise<void> {
  const service = await startService(url, redisPrefix);
  try {
    const { base, token } = service;
    // Warm-up: the route, the stream and the client once, on a handful of rows.
    await readExport(`${base}${LIST}/export?format=csv&action=auth.*`, token);
    const measured = await peakRss(() => readExport(`${base}${LIST}/export?format=csv`, token));
    console.log(`RESULT ${JSON.stringify(measured)}`);
  } finally {
    await service.close();
  }
}

/** `--baseline <url>`: a fresh process measuring the plain keyset read. */
async function baselineProcess(url: string): Promise<void> {
  const warm = new pg.Client({ connectionString: url });
  await warm.connect();
  await warm.query('select * from audit_logs order by seq limit 1000');
  await warm.end();
  console.log(`RESULT ${JSON.stringify(await peakRss(() => plainRead(url)))}`);
}

/** Runs this file with `args` in a child process and returns what it measured. */
function inChild<T>(args: string[]): Promise<Measured<T>> {
  const child = spawn(process.execPath, [...process.execArgv, import.meta.filename, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (code === 0 && line !== undefined) resolve(JSON.parse(line.slice(7)) as Measured<T>);
      else reject(new Error(`${args[0] ?? ''} exited with ${String(code)}: ${out}`));
    });
  });
}

/** `--seed <url>`: the child that migrates and fills the database, then exits. */
async function seedProcess(url: string): Promise<void> {
  const database = await openDatabase({ url });
  try {
    await runMigrations(database);
    await seed(database.db, settings.entries, benchUsers());
  } finally {
    await database.close();
  }
}

/**
 * Seeds in a child process, so that this process (the service) starts with none of the seeding's
 * heap: RSS does not shrink after a collection, and a grown heap would hide the export's growth.
 */
function seedInChild(url: string): Promise<number> {
  const started = performance.now();
  const args = [...process.execArgv, import.meta.filename, '--seed', url];
  const child = spawn(process.execPath, args, { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve(performance.now() - started);
      else reject(new Error(`seeding exited with ${String(code)}`));
    });
  });
}

const [phase, url = '', prefix = ''] = process.argv.slice(2);
if (phase === '--seed') await seedProcess(url);
else if (phase === '--export') await exportProcess(url, prefix);
else if (phase === '--baseline') await baselineProcess(url);
else await runBenchmark(ADMIN_DATABASE_URL, main, cleanUp);
