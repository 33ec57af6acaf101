import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { queryRows } from '../src/db/client.js';
import { nestedFormsPdf } from './helpers/hostile-pdf.js';
import { exitWithin } from './helpers/process.js';
import {
  backends,
  logLines,
  startService,
  uploadOverHttp,
  waitForJobOverHttp,
  type Backends,
  type RunningService,
} from './helpers/service.js';

/**
 * Issue 9, item 3: "SIGTERM ends the process within the shutdown deadline with a job mid-run (the
 * job is released for another worker or recorded as failed)". Before, a job stuck in pdf.js kept
 * the process alive past SIGTERM. The job here would run for hours (30 nested form XObjects, a
 * CPU budget of an hour).
 */

interface JobRow {
  state: string;
  lease_until: string | null;
  retry_count: number;
  status: string;
}

describe.each(['postgres', 'embedded'] as const)('SIGTERM with a job mid-run (%s)', (kind) => {
  let store: Backends | undefined;
  let service: RunningService | undefined;
  afterEach(async () => {
    if (service?.process.child.exitCode === null) service.process.child.kill('SIGKILL');
    service = undefined;
    await store?.dispose();
    store = undefined;
  });

  it(
    'exits 0 within the shutdown deadline and releases the job for another run',
    { timeout: 120_000 },
    async () => {
      store = await backends(kind);
      service = await startService({
        ...store.env,
        KB_MAX_CPU_SECONDS: '3600',
        SHUTDOWN_TIMEOUT_MS: '5000',
      });
      const jobId = await uploadOverHttp(service, nestedFormsPdf(30), 'Endless forms');
      await waitForJobOverHttp(service, jobId, (job) => job.state === 'running');

      service.process.child.kill('SIGTERM');
      // The deadline is 5 s; a few more for the logger and the database to close.
      const exit = await exitWithin(service.process, 10_000);
      expect(exit, service.process.output()).toEqual({ code: 0, signal: null });
      const lines = logLines(service.process);
      expect(lines.some((l) => l.msg === 'indexing job released' && l.jobId === jobId)).toBe(true);
      expect(lines.at(-1)?.msg).toBe('stopped');

      const database = await store.open();
      try {
        const [row] = await queryRows<JobRow>(
          database.db,
          sql`select j.state, j.lease_until, j.retry_count, d.status from kb_indexing_jobs j
              join kb_documents d on d.id = j.document_id where j.id = ${jobId}`,
        );
        // Pending again, with no lease and no retry spent: the next runner starts it at once.
        expect(row).toEqual({
          state: 'pending',
          lease_until: null,
          retry_count: 0,
          status: 'uploaded',
        });
      } finally {
        await database.close();
      }
    },
  );
});
