import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config.js';
import { users, type UserRow } from '../src/db/schema/index.js';
import { createDeps, type Deps } from '../src/deps.js';
import { usersRepo } from '../src/modules/users/repo.js';
import { createLogger } from '../src/platform/logger.js';
import {
  ADMIN_DATABASE_URL,
  REDIS_URL,
  createDatabase,
  deleteRedisPrefix,
  serverVersions,
} from './lib/fixtures.js';
import { num, percentile, prng, runBenchmark, table, writeSection } from './lib/sections.js';

/**
 * `make bench-cache` (issue 12): look-ups per second through the service's cache, against a plain
 * in-process Map lookup of the same keys in the same run:
 *   - flag evaluation (`FlagsService.isEnabled`: the cached flag list plus the rollout hash) and
 *     every flag for a user at once (`evaluate`, what GET /api/feature-flags answers);
 *   - cached user lookups (`UsersService.findForAuth`, what every authenticated request does), with
 *     the default memory lifetime (0.5 s, then Redis), with memory off (every look-up from Redis),
 *     and the database alone (no cache) for scale.
 * One look-up at a time (each awaited), as a request handler does. Scratch database and Redis
 * prefix, removed at the end. Also: how soon a flag toggled on one instance is seen on a second one.
 * Knobs: BENCH_OPS (200000), BENCH_USERS (2000), BENCH_FLAGS (20), BENCH_TOGGLES (200),
 * BENCH_WRITE=0 (leave BENCHMARKS.md alone).
 */

const settings = {
  ops: num('BENCH_OPS', 200_000),
  users: num('BENCH_USERS', 2000),
  flags: num('BENCH_FLAGS', 20),
  toggles: num('BENCH_TOGGLES', 200),
  write: process.env.BENCH_WRITE !== '0',
};

const cleanups: (() => Promise<unknown>)[] = [];
async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) {
    await fn().catch((err: unknown) => {
      console.error('clean-up step failed:', err);
    });
  }
}

interface Rate {
  name: string;
  ops: number;
  seconds: number;
}

/** Runs `op` `ops` times, one at a time, after a warm-up of a tenth as many. */
async function measure(name: string, ops: number, op: (i: number) => unknown): Promise<Rate> {
  for (let i = 0; i < Math.max(1000, ops / 10); i += 1) await op(i);
  const start = performance.now();
  for (let i = 0; i < ops; i += 1) await op(i);
  const seconds = (performance.now() - start) / 1000;
  const rate = { name, ops, seconds };
  console.log(`${name}: ${fmt(ops / seconds)}/s`);
  return rate;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => `${n.toFixed(1)} ms`;

async function service(userCacheTtlMs: string, database: string, prefix: string) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-cache-'));
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
    USER_CACHE_TTL_MS: userCacheTtlMs,
    KB_WORKER_ENABLED: 'false',
  });
  const deps = await createDeps(config, createLogger(config));
  cleanups.push(() => deps.close());
  return deps;
}

async function seedUsers(deps: Deps, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  const at = new Date();
  for (let i = 0; i < ids.length; i += 500) {
    await deps.database.db.insert(users).values(
      ids.slice(i, i + 500).map((id) => ({
        id,
        email: `${id}@bench.example`,
        fullName: 'Bench User',
        passwordHash: 'not-a-hash',
        createdAt: at,
        updatedAt: at,
      })),
    );
  }
  return ids;
}

async function main(): Promise<void> {
  const database = await createDatabase();
  cleanups.push(() => database.drop());
  const prefix = `bench:${randomBytes(6).toString('hex')}:`;
  cleanups.push(() => deleteRedisPrefix(prefix));
  const deps = await service('500', database.url, prefix);
  const ids = await seedUsers(deps, settings.users);
  const actor = { id: ids[0] ?? '', email: `${ids[0] ?? ''}@bench.example` };
  const ctx = { ip: null, userAgent: null, requestId: null };
  const names = Array.from({ length: settings.flags }, (_, i) => `bench.flag-${String(i)}`);
  for (const name of names) {
    await deps.flags.create(
      actor,
      { name, enabled: true, description: '', rolloutPercentage: 50 },
      ctx,
    );
  }
  const random = prng(20_261_124);
  const order = Array.from({ length: settings.ops }, () => Math.floor(random() * ids.length));
  const userAt = (i: number) => ids[order[i % order.length] ?? 0] ?? '';
  const rows = new Map<string, UserRow>();
  for (const id of ids) {
    const row = await usersRepo.findById(deps.database.db, id);
    if (row !== undefined) rows.set(id, row);
  }
  const ops = settings.ops;
  const rates: Rate[] = [];
  rates.push(await measure('Map.get (baseline)', ops, (i) => rows.get(userAt(i))));
  rates.push(
    await measure('flag evaluation (isEnabled)', ops, (i) =>
      deps.flags.isEnabled(names[i % names.length] ?? '', userAt(i)),
    ),
  );
  rates.push(
    await measure(`all ${String(names.length)} flags for a user (evaluate)`, ops / 10, (i) =>
      deps.flags.evaluate(userAt(i)),
    ),
  );
  rates.push(
    await measure('user lookup, memory 0.5 s over Redis (default)', ops, (i) =>
      deps.users.findForAuth(userAt(i)),
    ),
  );
  const noMemory = await service('0', database.url, prefix);
  rates.push(
    await measure('user lookup, memory off (Redis each time)', ops / 10, (i) =>
      noMemory.users.findForAuth(userAt(i)),
    ),
  );
  rates.push(
    await measure('user lookup, database (no cache)', ops / 10, (i) =>
      usersRepo.findById(deps.database.db, userAt(i)),
    ),
  );
  const propagation = await flagPropagation(
    deps,
    await service('500', database.url, prefix),
    actor,
  );
  await report(rates, propagation);
}

/**
 * A flag toggled through one instance, then evaluated on a second one sharing the database and
 * Redis until it shows the change: milliseconds from the toggle's return, per toggle.
 */
async function flagPropagation(
  one: Deps,
  two: Deps,
  actor: { id: string; email: string },
): Promise<Float64Array> {
  const ctx = { ip: null, userAgent: null, requestId: null };
  const name = 'bench.propagation';
  await one.flags.create(
    actor,
    { name, enabled: false, description: '', rolloutPercentage: 100 },
    ctx,
  );
  const user = randomUUID();
  const times = new Float64Array(settings.toggles);
  for (let i = 0; i < settings.toggles; i += 1) {
    const before = await two.flags.isEnabled(name, user);
    await one.flags.toggle(actor, name, ctx);
    const start = performance.now();
    while ((await two.flags.isEnabled(name, user)) === before) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    times[i] = performance.now() - start;
  }
  return times.sort();
}

async function report(rates: Rate[], propagation: Float64Array): Promise<void> {
  const baseline = rates[0];
  if (baseline === undefined) return;
  const perSecond = (r: Rate) => r.ops / r.seconds;
  const versions = await serverVersions();
  const rows = rates.map((r) => [
    r.name,
    fmt(r.ops),
    fmt(perSecond(r)),
    (perSecond(baseline) / perSecond(r)).toFixed(1),
  ]);
  const markdown = [
    '## Cache and feature flags (issue 12)',
    '',
    `Command: \`make bench-cache\` (\`npx tsx bench/admin-cache.ts\`). Date: ${new Date().toISOString()}.`,
    `Machine: ${String(cpus().length)} cores, load ${loadavg()[0]?.toFixed(2) ?? '?'}; PostgreSQL ${versions.postgres}, Redis ${versions.redis}.`,
    `${fmt(settings.users)} users chosen at random, ${String(settings.flags)} flags at a 50 % rollout; one look-up at a time, each awaited. "× Map" is how many Map lookups fit in the time of one.`,
    '',
    table(['look-up', 'count', 'per second', '× Map'], rows),
    '',
    `A flag toggled through one instance, evaluated on a second instance (same database and Redis) until it changes, ${String(propagation.length)} times: p50 ${ms(percentile(propagation, 0.5))}, p99 ${ms(percentile(propagation, 0.99))}, max ${ms(propagation[propagation.length - 1] ?? Number.NaN)} (goal: within 1 s). The second instance's memory lifetime is 1 s: only the pub/sub invalidation makes it faster than that.`,
  ].join('\n');
  await writeSection('cache', markdown, settings.write);
}

await runBenchmark(ADMIN_DATABASE_URL, main, cleanUp);
