import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import { median, type Run } from './load.js';
import { leaseSize } from '../../src/platform/rate-limit.js';

/** Two targets measured in the same rounds; `perRound` holds b/a req/s of each round. */
export interface Pair {
  a: Run;
  b: Run;
  perRound: number[];
}

export interface Results {
  date: Date;
  settings: {
    connections: number;
    duration: number;
    rounds: number;
    warmup: number;
    loginConnections: number;
    idleSeconds: number;
  };
  machine: {
    cpu: string;
    cores: number;
    memGiB: number;
    node: string;
    /** One-minute load average when the run started. */
    load: number;
    postgres: string;
    redis: string;
  };
  env: Record<string, string>;
  /** a = bare, b = service. */
  vsBare: (Pair & { route: string; goal: number })[];
  /** a = limits off, b = limits on. */
  limiter: Pair;
  /** a = LOG_LEVEL=warn, b = LOG_LEVEL=info. */
  accessLog: (Pair & { route: string })[];
  logins: Run;
  memory: { idle: { service: number; bare: number }; peakMiB: number };
}

const START = '<!-- bench:http:start -->';
const END = '<!-- bench:http:end -->';
const HEADER = `# Benchmarks

Reproducible benchmarks of \`bench/\`. Each script rewrites only its own section, between its
\`<!-- bench:<name>:start -->\` and \`<!-- bench:<name>:end -->\` markers.
`;

const rps = (r: Run) => r.rps.toFixed(0);
const ms = (v: number) => v.toFixed(2);
const us = (v: number) => v.toFixed(1);
/** The comparison's ratio: the median of the per-round ratios (each round's two runs are adjacent). */
const ratioOf = (p: Pair) => median(p.perRound);
const ratio = (p: Pair) => ratioOf(p).toFixed(2);
const range = (values: number[]) =>
  `${Math.min(...values).toFixed(2)} to ${Math.max(...values).toFixed(2)}`;

/** The cells both comparison tables share: route, each side's req/s, p99 and CPU, the ratio. */
const pairCells = (p: Pair & { route: string }): string[] => [
  p.route,
  rps(p.a),
  ms(p.a.p99),
  us(p.a.cpuUs),
  rps(p.b),
  ms(p.b.p99),
  us(p.b.cpuUs),
  ratio(p),
  range(p.perRound),
];
const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
const table = (head: string[], rows: (string | number)[][]) =>
  [row(head), row(head.map(() => '---')), ...rows.map(row)].join('\n');

/** The http section of BENCHMARKS.md, markers excluded. */
export function render(r: Results): string {
  const s = r.settings;
  const m = r.machine;
  const when = r.date.toISOString().replace('T', ' ').slice(0, 16);
  const limiterUs = r.limiter.b.cpuUs - r.limiter.a.cpuUs;
  return `## HTTP: the service against a bare Fastify app

Written by \`bench/http.ts\`; edit the script, not this section.

- Command: \`make bench\` (runs \`npm run build\`, then \`npx tsx bench/http.ts\`)
- Date: ${when} UTC
- Machine: ${m.cpu}, ${m.cores} cores, ${m.memGiB.toFixed(1)} GiB, load average ${m.load.toFixed(2)}
  at the start; Node ${m.node}; PostgreSQL ${m.postgres} and Redis ${m.redis} on the same machine.
  The load generator, the service, PostgreSQL and Redis share the ${m.cores} cores.
- Load: autocannon in the benchmark's own process, ${s.connections} connections, no pipelining,
  ${s.duration} s per run after ${s.warmup} s of warm-up per target; ${s.rounds} rounds, each
  target once per round, the two sides of each comparison one after the other, the order reversed
  every other round. req/s, p50 and p99 are medians over the rounds (p50/p99 in ms from the
  per-request timings); a ratio is the median of the rounds' ratios. Server CPU is the user +
  system time of the server process (\`/proc/<pid>/stat\`) per answered request: it depends far
  less on what else the machine is doing than req/s does.
- Service: \`node --enable-source-maps dist/src/main.js\` (the \`npm start\` command), PostgreSQL
  and Redis as in a deployment, output through a pipe to \`bench/results/<instance>.log\`;
  settings below. The bare app (\`bench/bare.ts\`) is Fastify with no logger, hooks, limiter, auth
  or database, answering the same JSON with the same response schemas.

### Service against bare Fastify

${table(
  [
    'route',
    'bare req/s',
    'bare p99',
    'bare CPU µs/req',
    'service req/s',
    'service p99',
    'service CPU µs/req',
    'service/bare',
    'per round',
    'goal',
    'met',
  ],
  r.vsBare.map((p) => [...pairCells(p), `≥ ${p.goal}`, ratioOf(p) >= p.goal ? 'yes' : '**no**']),
)}

GET /api/auth/me sends \`Authorization: Bearer <access token>\` of a user registered for the run:
JWT verification, the revocation check in Redis, the user (cached for under a second) and the
answer. Service figures are with \`LOG_LEVEL=info\`, the default: one access line per request.

### Cost of the rate limiter (GET /health, under the limit)

${table(
  ['limits', 'req/s', 'p50', 'p99', 'server CPU µs/req'],
  [
    [
      'off (`RATE_LIMIT_ENABLED=false`)',
      rps(r.limiter.a),
      ms(r.limiter.a.p50),
      ms(r.limiter.a.p99),
      us(r.limiter.a.cpuUs),
    ],
    [
      'on (counted in Redis)',
      rps(r.limiter.b),
      ms(r.limiter.b.p50),
      ms(r.limiter.b.p99),
      us(r.limiter.b.cpuUs),
    ],
  ],
)}

With limits on: ${ratio(r.limiter)} of the throughput with limits off (per round
${range(r.limiter.perRound)}); ${limiterUs >= 0 ? `${us(limiterUs)} µs more` : `${us(-limiterUs)} µs less`}
server CPU per request. With the limit raised to ${r.env.RATE_LIMIT_HEALTH_PER_MINUTE ?? '?'} per
minute the limiter reserves ${String(leaseSize(Number(r.env.RATE_LIMIT_HEALTH_PER_MINUTE)))} hits per Redis call (limits of 2000 or more per window are
counted in such leases, 0.1% of the limit and at most 1000 each; the next lease is reserved while
half of the current one is left, so requests do not wait for Redis); below 2000, as with the
default 100 per minute, every request is one Redis call.

### Cost of the access log (LOG_LEVEL=info against warn)

${table(
  [
    'route',
    'warn req/s',
    'warn p99',
    'warn CPU µs/req',
    'info req/s',
    'info p99',
    'info CPU µs/req',
    'info/warn',
    'per round',
  ],
  r.accessLog.map(pairCells),
)}

### Logins

${table(
  ['route', 'connections', 'logins/s', 'p50', 'p99', 'server CPU ms/login'],
  [
    [
      'POST /api/auth/login (same user, right password)',
      s.loginConnections,
      rps(r.logins),
      ms(r.logins.p50),
      ms(r.logins.p99),
      (r.logins.cpuUs / 1000).toFixed(2),
    ],
  ],
)}

Each login verifies an argon2id hash (m = 19 MiB, t = 2, p = 1) on the libuv thread pool, signs
two JWTs and writes the login, the refresh token and an audit entry in one transaction.

### Memory

${table(
  ['process', 'idle RSS (MiB)'],
  [
    ['service', r.memory.idle.service.toFixed(1)],
    ['bare Fastify', r.memory.idle.bare.toFixed(1)],
  ],
)}

Idle RSS: VmRSS from \`/proc/<pid>/status\` after the warm-up and ${s.idleSeconds} s without
requests. The service's peak RSS over the whole run was ${r.memory.peakMiB.toFixed(1)} MiB.

### Service settings

${table(
  ['variable', 'value'],
  Object.entries(r.env).map(([k, v]) => [`\`${k}\``, `\`${v}\``]),
)}

Two more instances on the same database and Redis differ in one variable each:
\`RATE_LIMIT_ENABLED=false\` and \`LOG_LEVEL=warn\`.`;
}

/** Rewrites the http section of `file` (created if missing), leaving every other section alone. */
export function writeSection(file: string, section: string): void {
  const block = `${START}\n\n${section}\n\n${END}`;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : HEADER;
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  const next =
    start >= 0 && end > start
      ? current.slice(0, start) + block + current.slice(end + END.length)
      : `${current.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, next);
}

/** The section as written to BENCHMARKS.md (formatted by prettier). */
export async function formatted(results: Results, file: string): Promise<string> {
  const options = (await resolveConfig(file)) ?? {};
  return (await format(render(results), { ...options, parser: 'markdown' })).trim();
}
