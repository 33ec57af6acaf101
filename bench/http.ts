import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import {
  ADMIN_DATABASE_URL,
  REDIS_URL,
  createDatabase,
  deleteRedisPrefix,
  serverVersions,
  shapeOf,
} from './lib/fixtures.js';
import { load, summarize, type LoadSpec, type Run } from './lib/load.js';
import { freePort, memory, sleep, startServer, type Server } from './lib/processes.js';
import { formatted, writeSection, type Results } from './lib/report.js';

/**
 * `make bench`: the service (PostgreSQL + Redis, as deployed) against a bare Fastify app answering
 * the same JSON, in one run on this machine; writes the http section of BENCHMARKS.md.
 * Knobs for quick trials: BENCH_CONNECTIONS, BENCH_DURATION, BENCH_ROUNDS, BENCH_WARMUP.
 */

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const settings = {
  connections: num('BENCH_CONNECTIONS', 50),
  duration: num('BENCH_DURATION', 3),
  rounds: num('BENCH_ROUNDS', 5),
  warmup: num('BENCH_WARMUP', 2),
  loginConnections: num('BENCH_LOGIN_CONNECTIONS', 8),
  idleSeconds: 5,
};
const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS_DIR = path.join(ROOT, 'bench', 'results');
const SERVICE_ENTRY = path.join(ROOT, 'dist', 'src', 'main.js');

/** Limits raised far above what one run sends, so every measured request is under the limit. */
const RAISED_LIMITS = {
  RATE_LIMIT_HEALTH_PER_MINUTE: '100000000',
  RATE_LIMIT_LOGIN_PER_MINUTE: '1000000',
};

const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) {
    await fn().catch((err: unknown) => {
      console.error('clean-up step failed:', err);
    });
  }
}

async function main(): Promise<void> {
  if (!existsSync(SERVICE_ENTRY)) throw new Error(`${SERVICE_ENTRY} missing: run npm run build`);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const startedAt = new Date();
  const load1 = loadavg()[0] ?? 0;
  const versions = await serverVersions();

  const database = await createDatabase();
  cleanups.push(() => database.drop());
  const redisPrefix = `mas_bench_${randomBytes(5).toString('hex')}:`;
  cleanups.push(() => deleteRedisPrefix(redisPrefix));
  const dataDir = mkdtempSync(path.join(tmpdir(), 'mas-bench-'));
  cleanups.push(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await Promise.resolve();
  });

  const serviceEnv = {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    JWT_SECRET: randomBytes(48).toString('base64url'),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    ...RAISED_LIMITS,
  };
  const start = async (name: string, extra: Record<string, string>): Promise<Server> => {
    const port = await freePort();
    const server = await startServer({
      name,
      args: ['--enable-source-maps', SERVICE_ENTRY],
      env: { PATH: process.env.PATH ?? '', ...serviceEnv, ...extra, PORT: String(port) },
      port,
      logFile: path.join(RESULTS_DIR, `${name}.log`),
      readyPath: '/ready',
    });
    cleanups.push(() => server.stop());
    return server;
  };

  const barePort = await freePort();
  const bare = await startServer({
    name: 'bare',
    args: ['--import', 'tsx', path.join(ROOT, 'bench', 'bare.ts')],
    env: { PATH: process.env.PATH ?? '', PORT: String(barePort) },
    port: barePort,
    logFile: path.join(RESULTS_DIR, 'bare.log'),
    readyPath: '/health',
  });
  cleanups.push(() => bare.stop());
  // The first instance migrates the fresh database; the others start on the migrated schema.
  const svc = await start('service', {});
  const [nolimit, warn] = await Promise.all([
    start('service-limits-off', { RATE_LIMIT_ENABLED: 'false' }),
    start('service-log-warn', { LOG_LEVEL: 'warn' }),
  ]);

  const credentials = {
    email: `bench-${randomBytes(6).toString('hex')}@example.org`,
    password: `bench-${randomBytes(12).toString('hex')}`,
  };
  const token = await signUp(svc.url, credentials);
  const bearer = { authorization: `Bearer ${token}` };
  await checkSameAnswers({ bare, svc, nolimit, bearer });

  const spec = (server: Server, route: string, headers?: Record<string, string>): LoadSpec => ({
    url: server.url + route,
    pid: server.pid,
    connections: settings.connections,
    duration: settings.duration,
    ...(headers === undefined ? {} : { headers }),
  });
  // In this order, the two sides of each comparison run next to each other.
  const targets = {
    'service /health, LOG_LEVEL=warn': spec(warn, '/health'),
    'bare /health': spec(bare, '/health'),
    'service /health': spec(svc, '/health'),
    'service /health, limits off': spec(nolimit, '/health'),
    'bare /api/auth/me': spec(bare, '/api/auth/me'),
    'service /api/auth/me': spec(svc, '/api/auth/me', bearer),
    'service /api/auth/me, LOG_LEVEL=warn': spec(warn, '/api/auth/me', bearer),
  } satisfies Record<string, LoadSpec>;
  type Target = keyof typeof targets;
  const names = Object.keys(targets) as Target[];

  console.log(`warm-up: ${settings.warmup} s per target`);
  for (const name of names) await load({ ...targets[name], duration: settings.warmup });
  await sleep(settings.idleSeconds * 1000);
  const idle = { service: memory(svc.pid).rssMiB, bare: memory(bare.pid).rssMiB };

  const runs = Object.fromEntries(names.map((n) => [n, [] as Run[]])) as Record<Target, Run[]>;
  for (let round = 0; round < settings.rounds; round++) {
    // Alternate the order so that drift on a noisy machine does not favour either side of a pair.
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const run = await load(targets[name]);
      runs[name].push(run);
      console.log(
        `round ${round + 1}/${settings.rounds}  ${name.padEnd(38)} ${run.rps.toFixed(0).padStart(6)} req/s` +
          `  p99 ${run.p99.toFixed(2).padStart(6)} ms  server CPU ${run.cpuUs.toFixed(1)} µs/req`,
      );
    }
  }

  const login: LoadSpec = {
    url: `${svc.url}/api/auth/login`,
    pid: svc.pid,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(credentials),
    connections: settings.loginConnections,
    duration: settings.duration,
  };
  await load({ ...login, duration: 1 });
  const logins = await load(login);
  console.log(`logins: ${logins.rps.toFixed(0)} /s  p99 ${logins.p99.toFixed(1)} ms`);

  const pair = (a: Target, b: Target) => ({
    a: summarize(runs[a]),
    b: summarize(runs[b]),
    perRound: runs[b].map((r, i) => r.rps / (runs[a][i]?.rps ?? Number.NaN)),
  });
  const results: Results = {
    date: startedAt,
    settings,
    machine: {
      cpu: cpus()[0]?.model ?? '?',
      cores: cpus().length,
      memGiB: totalmem() / 2 ** 30,
      node: process.version,
      load: load1,
      ...versions,
    },
    env: {
      ...serviceEnv,
      DATABASE_URL: database.url,
      JWT_SECRET: '(random, 48 bytes)',
      DATA_DIR: '(temporary directory)',
    },
    vsBare: [
      { route: 'GET /health', goal: 0.7, ...pair('bare /health', 'service /health') },
      {
        route: 'GET /api/auth/me',
        goal: 0.4,
        ...pair('bare /api/auth/me', 'service /api/auth/me'),
      },
    ],
    limiter: pair('service /health, limits off', 'service /health'),
    accessLog: [
      { route: 'GET /health', ...pair('service /health, LOG_LEVEL=warn', 'service /health') },
      {
        route: 'GET /api/auth/me',
        ...pair('service /api/auth/me, LOG_LEVEL=warn', 'service /api/auth/me'),
      },
    ],
    logins,
    memory: { idle, peakMiB: memory(svc.pid).peakMiB },
  };
  const file = path.join(ROOT, 'BENCHMARKS.md');
  const section = await formatted(results, file);
  console.log(`\n${section}\n`);
  writeSection(file, section);
  console.log('wrote BENCHMARKS.md');
}

/** Registers the benchmark user and logs in once; returns the access token. */
async function signUp(base: string, credentials: { email: string; password: string }) {
  const post = async (route: string, body: unknown) => {
    const res = await fetch(base + route, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`POST ${route}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { data: { access_token?: string } };
  };
  await post('/api/auth/register', { ...credentials, full_name: 'Benchmark User' });
  const login = await post('/api/auth/login', credentials);
  const token = login.data.access_token;
  if (token === undefined) throw new Error('login answered no access token');
  return token;
}

/** Bare and service answer JSON of the same shape; only the limited instance sends limit headers. */
async function checkSameAnswers(s: {
  bare: Server;
  svc: Server;
  nolimit: Server;
  bearer: Record<string, string>;
}): Promise<void> {
  const get = async (url: string, headers: Record<string, string> = {}) => {
    const res = await fetch(url, { headers });
    if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
    return { headers: res.headers, shape: JSON.stringify(shapeOf(await res.json())) };
  };
  for (const [route, headers] of [
    ['/health', {}],
    ['/api/auth/me', s.bearer],
  ] as const) {
    const [bare, svc] = await Promise.all([
      get(s.bare.url + route),
      get(s.svc.url + route, headers),
    ]);
    if (bare.shape !== svc.shape) {
      throw new Error(`${route}: bare answers ${bare.shape}, service ${svc.shape}`);
    }
  }
  const on = await get(`${s.svc.url}/health`);
  const off = await get(`${s.nolimit.url}/health`);
  if (on.headers.get('x-ratelimit-limit') !== RAISED_LIMITS.RATE_LIMIT_HEALTH_PER_MINUTE) {
    throw new Error('the service instance does not enforce the raised /health limit');
  }
  if (off.headers.has('x-ratelimit-limit')) throw new Error('limits-off instance sends limits');
}

process.once('SIGINT', () => {
  void cleanUp().then(() => process.exit(130));
});

try {
  console.log(`admin database ${ADMIN_DATABASE_URL}, redis ${REDIS_URL}`);
  await main();
} catch (err) {
  process.exitCode = 1;
  console.error(err instanceof Error ? err.message : err);
} finally {
  await cleanUp();
}
