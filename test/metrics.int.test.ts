import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobState } from '../src/db/schema/index.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, login, type TestUser } from './helpers/factories.js';
import {
  jobOf,
  sampleText,
  uploadNew,
  waitForJob,
  waitIndexed,
  type DocumentDto,
} from './helpers/knowledge.js';
import { growth, promtoolCheck, sampleOf, scrape, type Exposition } from './helpers/metrics.js';
import { textlessPdf } from './helpers/pdf.js';

const KB_ENV = { KB_JOB_SWEEP_MS: '200', KB_JOB_RETRY_BASE_MS: '50' };
const STATES = ['pending', 'running', 'completed', 'failed', 'superseded'] as const;
const PROMTOOL_TOTAL_GAUGE =
  /^nodejs_\w+_total non-counter metrics should not have "_total" suffix$/;

/** How much kb_jobs_total grew per state between two scrapes. */
function jobGrowth(before: Exposition, after: Exposition): Record<JobState, number> {
  const entries = STATES.map((state) => [state, growth(before, after, 'kb_jobs_total', { state })]);
  return Object.fromEntries(entries) as Record<JobState, number>;
}

/** An upload that fails at once (a PDF without text), waited for until its job has failed. */
async function failedUpload(t: TestApp, token: string, docKey: string): Promise<DocumentDto> {
  const doc = await uploadNew(t.app, token, {
    file: await textlessPdf(),
    filename: 'scan.pdf',
    title: 'Scanned form',
    docKey,
  });
  await waitForJob(t.app, token, jobOf(doc).id, 'failed');
  return doc;
}

describe.each(['postgres', 'pglite'] as const)('metrics fed by what happens (%s)', (backend) => {
  let t: TestApp;
  let admin: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ backend, env: KB_ENV });
    admin = await createUser(t.app, t.deps, { admin: true });
  });
  afterAll(() => t.close());

  it('login and requests move http_*, auth_events_total and cache_requests_total', async () => {
    const { exposition: before } = await scrape(t.app);
    const signedIn = await login(t.app, admin.email);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const token = signedIn.json<{ data: { access_token: string } }>().data.access_token;
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/conversations',
        headers: bearer(token),
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    const { exposition: after } = await scrape(t.app);

    const list = { method: 'GET', route: '/conversations' };
    const grew = (name: string, labels: Record<string, string>) =>
      growth(before, after, name, labels);
    expect(
      grew('http_requests_total', { method: 'POST', route: '/api/auth/login', status: '200' }),
    ).toBe(1);
    expect(grew('http_requests_total', { ...list, status: '200' })).toBe(3);
    expect(grew('http_request_duration_seconds_count', list)).toBe(3);
    expect(grew('http_request_duration_seconds_bucket', { ...list, le: '+Inf' })).toBe(3);
    expect(grew('http_request_duration_seconds_sum', list)).toBeGreaterThan(0);
    expect(grew('auth_events_total', { event: 'login' })).toBe(1);
    expect(grew('auth_events_total', { event: 'login_failed' })).toBe(0);

    // Each authenticated request looks up its token (verified-token cache) and its user (user row
    // cache) once: 6 look-ups. The token is new on the first request and remembered for minutes.
    const hits = grew('cache_requests_total', { layer: 'l1', result: 'hit' });
    const misses = grew('cache_requests_total', { layer: 'l1', result: 'miss' });
    expect(hits + misses).toBe(6);
    expect(hits).toBeGreaterThanOrEqual(2);
    expect(misses).toBeGreaterThanOrEqual(1);
  });

  it('kb_jobs_total counts each state a job reaches: indexed, failed, retried, superseded', async () => {
    const token = admin.access;
    const docKey = `metrics-${backend}`;
    const { exposition: start } = await scrape(t.app);
    for (const state of STATES) expect(sampleOf(start, 'kb_jobs_total', { state })).toBeDefined();

    await waitIndexed(t.app, token, await uploadNew(t.app, token, { file: sampleText('sepsis') }));
    const failed = await failedUpload(t, token, docKey);
    const { exposition: afterTwo } = await scrape(t.app);
    expect(jobGrowth(start, afterTwo)).toEqual({
      pending: 2,
      running: 2,
      completed: 1,
      failed: 1,
      superseded: 0,
    });

    // An administrator's retry: pending and running again, and failed again.
    const retried = await t.app.inject({
      method: 'POST',
      url: `/api/admin/kb/jobs/${jobOf(failed).id}/retry`,
      headers: bearer(token),
    });
    expect(retried.statusCode, retried.body).toBe(202);
    await waitForJob(t.app, token, jobOf(failed).id, 'failed');
    // A new version of the failed document supersedes its unfinished (failed) job.
    const next = await uploadNew(t.app, token, { file: sampleText('sepsis bundle'), docKey });
    await waitIndexed(t.app, token, next);
    const { exposition: end } = await scrape(t.app);
    expect(jobGrowth(afterTwo, end)).toEqual({
      pending: 2,
      running: 2,
      completed: 1,
      failed: 1,
      superseded: 1,
    });
  });
});

describe('two instances on one PostgreSQL and Redis', () => {
  let first: TestApp | undefined;
  let second: TestApp | undefined;
  afterAll(async () => {
    await second?.close();
    await first?.close(); // owns the database: last
  });

  it('each counts the transitions it made, so their sum counts every transition once', async () => {
    const one = await createTestApp({ env: KB_ENV });
    first = one;
    const { databaseUrl, redisPrefix, dataDir } = one.deps.config;
    const two = await createTestApp({
      shared: { databaseUrl: databaseUrl ?? '', redisPrefix },
      // One file store for both, as in a deployment (there it is WebDAV).
      env: { ...KB_ENV, DATA_DIR: dataDir },
    });
    second = two;
    const scrapeBoth = async () =>
      [(await scrape(one.app)).exposition, (await scrape(two.app)).exposition] as const;
    const admin = await createUser(one.app, one.deps, { admin: true });
    const [oneBefore, twoBefore] = await scrapeBoth();
    const docs = [];
    for (let i = 0; i < 4; i++) {
      const topic = `topic${String(i)}`;
      docs.push(await uploadNew(one.app, admin.access, { file: sampleText(topic), docKey: topic }));
    }
    for (const doc of docs) await waitIndexed(one.app, admin.access, doc);
    const [oneAfter, twoAfter] = await scrapeBoth();
    const byOne = jobGrowth(oneBefore, oneAfter);
    const byTwo = jobGrowth(twoBefore, twoAfter);
    const sum = Object.fromEntries(STATES.map((s) => [s, byOne[s] + byTwo[s]]));
    expect(sum).toEqual({ pending: 4, running: 4, completed: 4, failed: 0, superseded: 0 });
    // The uploads went to the first instance: it created every job, whoever ran them.
    expect(byOne.pending).toBe(4);
  });
});

describe('promtool check metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: KB_ENV });
  });
  afterAll(() => t.close());

  it("finds nothing wrong after real activity, except prom-client's nodejs_*_total gauges", async () => {
    const admin = await createUser(t.app, t.deps, { admin: true });
    await t.app.inject({ method: 'GET', url: '/api/auth/me', headers: bearer(admin.access) });
    await t.app.inject({ method: 'GET', url: '/no/such/route' });
    await waitIndexed(
      t.app,
      admin.access,
      await uploadNew(t.app, admin.access, { file: sampleText('asthma') }),
    );
    await failedUpload(t, admin.access, 'promtool-failed');
    const { text, exposition } = await scrape(t.app);
    // The activity is in the text promtool reads.
    expect(sampleOf(exposition, 'kb_jobs_total', { state: 'completed' })?.value).toBe(1);

    const { code, lines } = await promtoolCheck(text);
    const unexpected = lines.filter((line) => !PROMTOOL_TOTAL_GAUGE.test(line));
    expect(unexpected).toEqual([]);
    // Exit 3 is "lint problems found", which the gauges are; anything else is a failure.
    expect(code).toBe(lines.length === 0 ? 0 : 3);
  });
});
