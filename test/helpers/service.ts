import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase, type Database } from '../../src/db/client.js';
import { createTestDatabase } from './db.js';
import { REDIS_URL } from './env.js';
import { multipartBody, type JobDto } from './knowledge.js';
import { deleteRedisPrefix } from './app.js';
import { freePort, spawnTsx, waitForHttp, type Spawned } from './process.js';

/**
 * A real service process (`tsx src/main.ts`, or the worker `src/worker-main.ts`) for tests of what
 * only a process shows: signals, exit codes, a second process sharing the database.
 */

export const ADMIN = { email: 'admin@example.org', password: 'Service-Admin-7c2f9' };

export interface Backends {
  env: Record<string, string>;
  /** Opens the service's database from the test (PostgreSQL, or its PGlite directory once stopped). */
  open(): Promise<Database>;
  dispose(): Promise<void>;
}

/** PostgreSQL + Redis (a fresh database and prefix), or the embedded defaults in `DATA_DIR`. */
export async function backends(kind: 'postgres' | 'embedded'): Promise<Backends> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mas-service-'));
  if (kind === 'embedded') {
    return {
      env: { DATA_DIR: dataDir },
      open: () => openDatabase({ pgliteDir: path.join(dataDir, 'pglite') }),
      dispose: () => rm(dataDir, { recursive: true, force: true }),
    };
  }
  const db = await createTestDatabase();
  const redisPrefix = `test:${randomBytes(6).toString('hex')}:`;
  return {
    env: {
      DATA_DIR: dataDir,
      DATABASE_URL: db.url,
      REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      JWT_SECRET: 'service-test-secret-long-enough-0123456789',
    },
    open: () => openDatabase({ url: db.url, poolSize: 2 }),
    dispose: async () => {
      await db.drop();
      await deleteRedisPrefix(redisPrefix);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface RunningService {
  process: Spawned;
  base: string;
  token: string;
}

/** `src/main.ts` with a bootstrap administrator, once it answers /health; signed in. */
export async function startService(env: Record<string, string>): Promise<RunningService> {
  const port = await freePort();
  const process = spawnTsx('src/main.ts', [], {
    PORT: String(port),
    LOG_LEVEL: 'info',
    NODE_ENV: 'development',
    BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
    BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
    KB_JOB_SWEEP_MS: '200',
    ...env,
  });
  await waitForHttp(port, '/health', 60_000);
  const base = `http://127.0.0.1:${port}`;
  const res = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  const body = (await res.json()) as { data: { access_token: string } };
  return { process, base, token: body.data.access_token };
}

/** Uploads `file` over HTTP; returns the new job's id. */
export async function uploadOverHttp(
  service: { base: string; token: string },
  file: Buffer | string,
  title: string,
): Promise<string> {
  const { payload, contentType } = multipartBody([
    { name: 'title', value: title },
    { name: 'category', value: 'guidelines' },
    { name: 'file', filename: 'document', content: file },
  ]);
  const res = await fetch(`${service.base}/api/admin/kb/documents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.token}`, 'content-type': contentType },
    body: payload,
  });
  const body = (await res.json()) as { data: { job: { id: string } } };
  if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${JSON.stringify(body)}`);
  return body.data.job.id;
}

/** Polls GET /api/admin/kb/jobs/{id} over HTTP until `done` holds. */
export async function waitForJobOverHttp(
  service: { base: string; token: string },
  jobId: string,
  done: (job: JobDto) => boolean,
  timeoutMs = 30_000,
): Promise<JobDto> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${service.base}/api/admin/kb/jobs/${jobId}`, {
      headers: { authorization: `Bearer ${service.token}` },
    });
    const job = ((await res.json()) as { data: JobDto }).data;
    if (done(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId}: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The JSON log lines a process wrote so far. */
export function logLines(s: Spawned): Record<string, unknown>[] {
  return s
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Waits until the process has logged a line with `msg`. */
export async function waitForLog(s: Spawned, msg: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!logLines(s).some((l) => l.msg === msg)) {
    if (s.child.exitCode !== null) throw new Error(`exited before "${msg}":\n${s.output()}`);
    if (Date.now() > deadline) throw new Error(`no "${msg}" in ${timeoutMs} ms:\n${s.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
