import { Readable } from 'node:stream';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs } from '../src/db/schema/index.js';
import type { Deps } from '../src/deps.js';
import { bearer, dataOf, errorOf } from './helpers/factories.js';
import {
  chunkRows,
  countRows,
  createKbApp,
  filesDir,
  filesUnder,
  getDocument,
  getJob,
  jobOf,
  sampleText,
  search,
  uploadNew,
  vectorRows,
  waitForDocument,
  waitForJob,
  waitIndexed,
  type DocumentDto,
  type JobDto,
  type KbApp,
} from './helpers/knowledge.js';
import { corruptPdf, encryptedPdf, textlessPdf } from './helpers/pdf.js';

interface Page {
  items: JobDto[];
  total: number;
  offset: number;
  limit: number;
}

const NO_SUCH_ID = '00000000-0000-4000-8000-000000000000';

/** The audit entries of `action` about one document. */
async function audited(deps: Deps, action: string, documentId: string) {
  return deps.database.db
    .select()
    .from(auditLogs)
    .where(and(eq(auditLogs.action, action), eq(auditLogs.resourceId, documentId)));
}

describe.each(['postgres', 'pglite'] as const)('knowledge jobs (%s)', (backend) => {
  let kb: KbApp;
  let token: string;
  const post = (url: string) => kb.app.inject({ method: 'POST', url, headers: bearer(token) });
  const get = (url: string) => kb.app.inject({ method: 'GET', url, headers: bearer(token) });

  beforeAll(async () => {
    kb = await createKbApp({ backend });
    token = kb.admin.access;
  });
  afterAll(async () => {
    await kb.close();
  });

  it.each([
    ['encrypted', encryptedPdf, /password/i],
    ['corrupt', corruptPdf, /./],
    ['no_text', textlessPdf, /OCR/],
  ] as const)('a %s PDF fails at once with clear error_details', async (code, make, message) => {
    const doc = await uploadNew(kb.app, token, {
      file: await make(),
      filename: `${code}.pdf`,
      title: `Unreadable ${code}`,
    });
    expect(doc.content_type).toBe('application/pdf');
    const job = await waitForJob(kb.app, token, jobOf(doc).id, 'failed');
    expect(job.retry_count).toBe(0);
    expect(job.error_details).toMatchObject({ code, retryable: false });
    expect(String(job.error_details?.message)).toMatch(message);
    expect(job.finished_at).not.toBeNull();
    const failed = await waitForDocument(kb.app, token, doc.id, 'failed');
    expect(failed).toMatchObject({ chunk_count: 0, indexed_at: null });
    expect(failed.error).toBe(job.error_details?.message);
    expect(await chunkRows(kb.deps, doc.id)).toBe(0);
  });

  it('reindex: a new job, same chunks; the chunks and vectors of the old run are gone', async () => {
    const doc = await uploadNew(kb.app, token, {
      file: sampleText('thrombolysis', 'Stroke Pathway'),
      title: 'Stroke Pathway',
    });
    const first = await waitIndexed(kb.app, token, doc);
    const reindexed = await post(`/api/admin/kb/documents/${doc.id}/reindex`);
    expect(reindexed.statusCode, reindexed.body).toBe(202);
    const body = dataOf<DocumentDto>(reindexed);
    expect(body.id).toBe(doc.id);
    const newJob = jobOf(body);
    expect(newJob.id).not.toBe(jobOf(doc).id);
    expect(newJob.state).toBe('pending');
    // The new job supersedes the document's unfinished ones, never itself.
    const fresh = await getJob(kb.app, token, newJob.id);
    expect(fresh.superseded_by, JSON.stringify(fresh)).toBeNull();
    expect(fresh.state).not.toBe('superseded');

    const again = await waitIndexed(kb.app, token, body);
    expect(again.chunk_count).toBe(first.chunk_count);
    expect(again.job?.id).toBe(newJob.id);
    expect(await chunkRows(kb.deps, doc.id)).toBe(first.chunk_count);
    const ofNewJob = await countRows(
      kb.deps,
      sql`select count(*)::int as n from kb_chunks where document_id = ${doc.id} and job_id = ${newJob.id} and active`,
    );
    expect(ofNewJob).toBe(first.chunk_count);
    expect(await vectorRows(kb.deps, doc.id)).toBe(first.chunk_count);
    const hits = await search(kb.app, token, 'thrombolysis protocol');
    expect(hits[0]?.document_id).toBe(doc.id);
    expect((await audited(kb.deps, 'kb.document.reindexed', doc.id)).length).toBe(1);
    expect((await audited(kb.deps, 'kb.document.uploaded', doc.id)).length).toBe(1);

    errorOf(await post(`/api/admin/kb/documents/${NO_SUCH_ID}/reindex`), 404);
  });

  it('delete removes the document, chunks, vectors, jobs and stored file; then 404', async () => {
    const doc = await uploadNew(kb.app, token, {
      file: sampleText('pericardiocentesis', 'Cardiac Tamponade'),
      title: 'Tamponade',
    });
    await waitIndexed(kb.app, token, doc);
    expect(await filesUnder(filesDir(kb.deps))).toContain(`kb/${doc.id}/original`);
    expect((await audited(kb.deps, 'kb.document.uploaded', doc.id)).length).toBe(1);
    expect((await search(kb.app, token, 'pericardiocentesis'))[0]?.document_id).toBe(doc.id);

    const del = await kb.app.inject({
      method: 'DELETE',
      url: `/api/admin/kb/documents/${doc.id}`,
      headers: bearer(token),
    });
    expect(del.statusCode, del.body).toBe(200);
    errorOf(await get(`/api/admin/kb/documents/${doc.id}`), 404);
    errorOf(await get(`/api/admin/kb/jobs/${jobOf(doc).id}`), 404);
    expect(await chunkRows(kb.deps, doc.id)).toBe(0);
    expect(await vectorRows(kb.deps, doc.id)).toBe(0);
    expect(await filesUnder(filesDir(kb.deps))).not.toContain(`kb/${doc.id}/original`);
    const hits = await search(kb.app, token, 'pericardiocentesis tamponade');
    expect(hits.some((h) => h.document_id === doc.id)).toBe(false);
    expect((await audited(kb.deps, 'kb.document.deleted', doc.id)).length).toBe(1);

    const twice = await kb.app.inject({
      method: 'DELETE',
      url: `/api/admin/kb/documents/${doc.id}`,
      headers: bearer(token),
    });
    errorOf(twice, 404);
  });

  it('lists jobs with the state and doc_key filters and paging; gets one; 404s', async () => {
    const docKey = `jobs-list-${backend}`;
    const a = await uploadNew(kb.app, token, { file: 'alpha text\n', title: 'J', docKey });
    await waitIndexed(kb.app, token, a);
    const b = await uploadNew(kb.app, token, { file: 'beta text\n', title: 'J other' });
    await waitIndexed(kb.app, token, b);

    const byKey = dataOf<Page>(await get(`/api/admin/kb/jobs?doc_key=${docKey}`));
    expect(byKey).toMatchObject({ total: 1, offset: 0, limit: 20 });
    expect(byKey.items.map((j) => j.id)).toEqual([jobOf(a).id]);

    const first = dataOf<Page>(await get('/api/admin/kb/jobs?state=completed&limit=1'));
    const second = dataOf<Page>(await get('/api/admin/kb/jobs?state=completed&limit=1&offset=1'));
    expect(first.total).toBeGreaterThanOrEqual(2);
    expect(second).toMatchObject({ total: first.total, offset: 1, limit: 1 });
    expect(first.items.map((j) => j.id)).toEqual([jobOf(b).id]); // newest first
    expect(second.items.map((j) => j.id)).toEqual([jobOf(a).id]);
    const completed = dataOf<Page>(await get('/api/admin/kb/jobs?state=completed&limit=100'));
    expect(completed.items).toHaveLength(completed.total);
    expect(completed.items.every((j) => j.state === 'completed')).toBe(true);
    const failed = dataOf<Page>(await get(`/api/admin/kb/jobs?state=failed&doc_key=${docKey}`));
    expect(failed).toMatchObject({ total: 0, items: [] });
    const failedAll = dataOf<Page>(await get('/api/admin/kb/jobs?state=failed&limit=100'));
    expect(failedAll.items.every((j) => j.state === 'failed')).toBe(true);

    const one = dataOf<JobDto>(await get(`/api/admin/kb/jobs/${jobOf(a).id}`));
    expect(one).toMatchObject({ id: jobOf(a).id, document_id: a.id, state: 'completed' });
    expect(one.processed_chunks).toBe(one.total_chunks);

    errorOf(await get(`/api/admin/kb/jobs/${NO_SUCH_ID}`), 404);
    errorOf(await get('/api/admin/kb/jobs/not-a-uuid'), 422);
    errorOf(await get('/api/admin/kb/jobs?state=sleeping'), 422);
    errorOf(await get('/api/admin/kb/jobs?limit=101'), 422);
    errorOf(await post(`/api/admin/kb/jobs/${NO_SUCH_ID}/retry`), 404);
    const notFailed = await post(`/api/admin/kb/jobs/${jobOf(a).id}/retry`);
    expect(errorOf(notFailed, 409).code).toBe('CONFLICT');
  });
});

describe.each(['postgres', 'pglite'] as const)('knowledge job retries (%s)', (backend) => {
  let kb: KbApp;
  let token: string;

  beforeAll(async () => {
    // The worker starts by hand, once the test has taken the stored original away.
    kb = await createKbApp({
      backend,
      env: {
        KB_WORKER_ENABLED: 'false',
        KB_JOB_MAX_RETRIES: '2',
        KB_JOB_RETRY_BASE_MS: '1000',
      },
    });
    token = kb.admin.access;
  });
  afterAll(async () => {
    await kb.close();
  });

  it('a transient failure retries with backoff up to max_retries, then a manual retry runs it again', async () => {
    const text = sampleText('hyperkalaemia', 'Potassium Emergencies');
    const doc = await uploadNew(kb.app, token, { file: text, title: 'Hyperkalaemia' });
    const job = jobOf(doc);
    expect(job.max_retries).toBe(2);
    const key = `kb/${doc.id}/original`;
    await kb.deps.files.delete(key); // the job now fails for real when it reads the original
    kb.deps.knowledge.worker.start();

    const retrying = await waitForJob(
      kb.app,
      token,
      job.id,
      (j) => j.state === 'pending' && j.retry_count === 1,
    );
    expect(retrying.error_details).toMatchObject({ code: 'indexing_error', retryable: true });
    // Backoff: the next attempt is scheduled about RETRY_BASE later, not at once.
    const delay = Date.parse(retrying.run_after) - Date.parse(retrying.updated_at);
    expect(delay).toBeGreaterThan(500);

    const failed = await waitForJob(kb.app, token, job.id, 'failed');
    expect(failed.retry_count).toBe(2);
    expect(failed.error_details).toMatchObject({ code: 'indexing_error', retryable: false });
    expect(String(failed.error_details?.message)).not.toMatch(/kb\//); // no internals
    const broken = await waitForDocument(kb.app, token, doc.id, 'failed');
    expect(broken.error).toBe(failed.error_details?.message);

    await kb.deps.files.put(key, Readable.from([Buffer.from(text)]));
    const retried = await kb.app.inject({
      method: 'POST',
      url: `/api/admin/kb/jobs/${job.id}/retry`,
      headers: bearer(token),
    });
    expect(retried.statusCode, retried.body).toBe(202);
    expect(dataOf<JobDto>(retried)).toMatchObject({ id: job.id, state: 'pending', retry_count: 0 });
    const completed = await waitForJob(kb.app, token, job.id, 'completed');
    expect(completed.processed_chunks).toBe(completed.total_chunks);
    expect((await getDocument(kb.app, token, doc.id)).status).toBe('indexed');
    expect((await audited(kb.deps, 'kb.job.retried', doc.id)).length).toBe(1);

    const again = await kb.app.inject({
      method: 'POST',
      url: `/api/admin/kb/jobs/${job.id}/retry`,
      headers: bearer(token),
    });
    expect(errorOf(again, 409).code).toBe('CONFLICT');
  });
});

describe.each(['postgres', 'pglite'] as const)('knowledge job shutdown (%s)', (backend) => {
  let kb: KbApp;

  beforeAll(async () => {
    kb = await createKbApp({ backend, env: { KB_WORKER_ENABLED: 'false' } });
  });
  afterAll(async () => {
    await kb.close();
  });

  it('a stop that comes while a job is being claimed releases it, no retry spent', async () => {
    const token = kb.admin.access;
    const text = sampleText('shutdown', 'Claimed At Shutdown');
    const doc = await uploadNew(kb.app, token, { file: text, title: 'Claimed at shutdown' });
    const { indexer } = kb.deps.knowledge;
    // run() has checked that it may start and is claiming the job when the stop comes.
    const outcome = indexer.run(jobOf(doc).id);
    indexer.stop();
    expect(await outcome).toEqual({ kind: 'released' });
    const job = await getJob(kb.app, token, jobOf(doc).id);
    expect(job).toMatchObject({ state: 'pending', retry_count: 0 });
    expect(await chunkRows(kb.deps, doc.id)).toBe(0);
  });
});
