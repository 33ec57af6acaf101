import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chunkRows,
  createKbApp,
  getDocument,
  getJob,
  jobOf,
  uploadNew,
  vectorRows,
  waitForDocument,
  waitForJob,
  waitIndexed,
  type KbApp,
} from './helpers/knowledge.js';

/**
 * Issue 9, item 9: a version superseded while its job runs stayed `processing` forever. DECISIONS
 * 6: "A document superseded before its job finished ends in a terminal status, never processing":
 * it ends `failed`, with an error that says why.
 */

/** About `bytes` of prose: long enough that indexing it takes a while. */
function longText(bytes: number, topic: string): string {
  const paragraph =
    `The ${topic} pathway starts with an assessment within one hour of arrival. ` +
    'Record the observations, escalate to the registrar when they worsen, and review the plan daily.\n\n';
  return paragraph.repeat(Math.ceil(bytes / paragraph.length));
}

describe.each(['postgres', 'pglite'] as const)('a superseded version (%s)', (backend) => {
  let kb: KbApp;
  let token: string;

  beforeAll(async () => {
    kb = await createKbApp({ backend });
    token = kb.admin.access;
  });
  afterAll(async () => {
    await kb.close();
  });

  it(
    'superseded while its job runs: the job is superseded, the document failed, not processing',
    { timeout: 120_000 },
    async () => {
      const docKey = `race-${backend}`;
      const v1 = await uploadNew(kb.app, token, {
        file: longText(10 * 1024 * 1024, 'sepsis'),
        title: 'Sepsis Pathway',
        docKey,
      });
      // The real race: version 2 arrives while version 1 is being indexed.
      await waitForJob(kb.app, token, jobOf(v1).id, 'running', 60_000);
      await waitForDocument(kb.app, token, v1.id, 'processing');
      const v2 = await uploadNew(kb.app, token, {
        file: longText(4096, 'stroke'),
        title: 'Sepsis Pathway',
        docKey,
      });
      expect(v2.version).toBe(2);

      const old = await waitForDocument(kb.app, token, v1.id, 'failed', 60_000);
      expect(old.superseded_by).toBe(v2.id);
      expect(old.error).toBe('Superseded by version 2 before its indexing finished');
      expect(old.indexed_at).toBeNull();
      const oldJob = await getJob(kb.app, token, jobOf(v1).id);
      expect(oldJob).toMatchObject({ state: 'superseded', superseded_by: jobOf(v2).id });
      await waitIndexed(kb.app, token, v2);
      // What the interrupted run had written is gone, not left behind inactive.
      await waitForJob(kb.app, token, jobOf(v2).id, 'completed');
      expect(await chunkRows(kb.deps, v1.id)).toBe(0);
      expect(await vectorRows(kb.deps, v1.id)).toBe(0);
      // And it stays failed: nothing the stopped run does afterwards changes it back.
      expect((await getDocument(kb.app, token, v1.id)).status).toBe('failed');
    },
  );

  it('an indexed version stays indexed when superseded: it finished', async () => {
    const docKey = `done-${backend}`;
    const v1 = await uploadNew(kb.app, token, {
      file: longText(2048, 'asthma'),
      title: 'A',
      docKey,
    });
    await waitIndexed(kb.app, token, v1);
    const v2 = await uploadNew(kb.app, token, {
      file: longText(2048, 'croup'),
      title: 'A',
      docKey,
    });
    expect(await getDocument(kb.app, token, v1.id)).toMatchObject({
      status: 'indexed',
      superseded_by: v2.id,
      error: null,
    });
    await waitIndexed(kb.app, token, v2);
  });
});

describe.each(['postgres', 'pglite'] as const)(
  'a version superseded before its job ran (%s)',
  (backend) => {
    let idle: KbApp;

    beforeAll(async () => {
      // No worker: version 1's job is still pending when version 2 arrives.
      idle = await createKbApp({ backend, env: { KB_WORKER_ENABLED: 'false' } });
    });
    afterAll(async () => {
      await idle.close();
    });

    it('ends failed at once, never uploaded or processing', async () => {
      const t = idle.admin.access;
      const v1 = await uploadNew(idle.app, t, {
        file: 'first text\n',
        title: 'Early',
        docKey: 'early',
      });
      const v2 = await uploadNew(idle.app, t, {
        file: 'second text\n',
        title: 'Early',
        docKey: 'early',
      });
      const old = await getDocument(idle.app, t, v1.id);
      expect(old).toMatchObject({
        status: 'failed',
        superseded_by: v2.id,
        error: 'Superseded by version 2 before its indexing finished',
      });
      expect((await getJob(idle.app, t, jobOf(v1).id)).state).toBe('superseded');
      expect((await getDocument(idle.app, t, v2.id)).status).toBe('uploaded');
      // A third version marks the second the same way and leaves the first as it was.
      const v3 = await uploadNew(idle.app, t, {
        file: 'third text\n',
        title: 'Early',
        docKey: 'early',
      });
      expect(await getDocument(idle.app, t, v2.id)).toMatchObject({
        status: 'failed',
        superseded_by: v3.id,
        error: 'Superseded by version 3 before its indexing finished',
      });
      expect((await getDocument(idle.app, t, v1.id)).error).toBe(
        'Superseded by version 2 before its indexing finished',
      );
    });
  },
);
