import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nestedFormsPdf } from './helpers/hostile-pdf.js';
import {
  createKbApp,
  getJob,
  jobOf,
  sampleText,
  search,
  uploadNew,
  waitForJob,
  waitIndexed,
  type KbApp,
} from './helpers/knowledge.js';
import { exitWithin, spawnTsx, type Spawned } from './helpers/process.js';
import { logLines, waitForLog } from './helpers/service.js';

/**
 * Issue 9, item 2: indexing in a process of its own (`npm run worker`), so deployments scale it
 * apart from the API. Here the API instance runs with KB_WORKER_ENABLED=false: only the worker
 * process can have indexed anything.
 */

describe('the separate worker process (PostgreSQL + BullMQ)', { timeout: 120_000 }, () => {
  let api: KbApp;
  let worker: Spawned | undefined;

  beforeAll(async () => {
    api = await createKbApp({ env: { KB_WORKER_ENABLED: 'false' } });
    const { databaseUrl, redisUrl, redisPrefix, dataDir } = api.deps.config;
    worker = spawnTsx('src/worker-main.ts', [], {
      DATABASE_URL: databaseUrl ?? '',
      REDIS_URL: redisUrl ?? '',
      REDIS_PREFIX: redisPrefix,
      // One file store for both, as in a deployment (there it is WebDAV).
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      NODE_ENV: 'development',
      KB_MAX_CPU_SECONDS: '3600',
      SHUTDOWN_TIMEOUT_MS: '5000',
    });
    await waitForLog(worker, 'indexing worker started');
  });
  afterAll(async () => {
    if (worker?.child.exitCode === null) worker.child.kill('SIGKILL');
    await api.close();
  });

  it('indexes what the API instance accepted', async () => {
    const token = api.admin.access;
    const doc = await uploadNew(api.app, token, {
      file: sampleText('thoracostomy', 'Chest Drain Insertion'),
      title: 'Chest Drains',
    });
    await waitIndexed(api.app, token, doc);
    expect((await search(api.app, token, 'thoracostomy'))[0]?.document_id).toBe(doc.id);
    const lines = logLines(worker!);
    expect(lines.some((l) => l.msg === 'indexing job completed' && l.jobId === jobOf(doc).id)).toBe(
      true,
    );
    // Sizes and ids only: the document's words never reach the log.
    expect(worker!.output()).not.toMatch(/thoracostomy/i);
  });

  it('stops on SIGTERM with a job mid-run and releases the job', async () => {
    const token = api.admin.access;
    const doc = await uploadNew(api.app, token, { file: nestedFormsPdf(30), title: 'Endless' });
    const running = await waitForJob(api.app, token, jobOf(doc).id, 'running');
    worker!.child.kill('SIGTERM');
    const exit = await exitWithin(worker!, 10_000);
    expect(exit, worker!.output()).toEqual({ code: 0, signal: null });
    expect(logLines(worker!).at(-1)?.msg).toBe('stopped');
    const job = await getJob(api.app, token, jobOf(doc).id);
    // Released, with no retry spent by the shutdown (on a loaded machine a lapsed lease may
    // already have cost one before SIGTERM: that is not the shutdown's doing).
    expect(job, worker!.output()).toMatchObject({
      state: 'pending',
      retry_count: running.retry_count,
    });
  });
});

describe('the worker process without a shared database', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'mas-worker-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('refuses to start on the embedded database, which only one process can open', async () => {
    const worker = spawnTsx('src/worker-main.ts', [], {
      DATA_DIR: dataDir,
      NODE_ENV: 'development',
    });
    const exit = await exitWithin(worker, 30_000);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(worker.output()).toMatch(/DATABASE_URL/);
  });
});
