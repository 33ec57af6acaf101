import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/client.js';
import { jobsRepo } from '../src/modules/knowledge/jobs-repo.js';
import { documentsRepo } from '../src/modules/knowledge/repo.js';
import { createUser, dataOf } from './helpers/factories.js';
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
  startEmbedded,
  upload,
  uploadNew,
  vectorRows,
  waitForJob,
  type DocumentDto,
  type EmbeddedApp,
  type KbApp,
} from './helpers/knowledge.js';

/**
 * What a runner that died mid-job leaves behind: the job claimed (`running`, with a lease) and
 * some chunks written but never made live.
 */
async function dieMidJob(db: Db, doc: DocumentDto, leaseMs: number): Promise<void> {
  const jobId = jobOf(doc).id;
  const claimed = await jobsRepo.claim(db, jobId, leaseMs);
  expect(claimed?.state).toBe('running');
  await documentsRepo.insertChunks(db, [
    {
      id: randomUUID(),
      documentId: doc.id,
      docKey: doc.doc_key,
      version: doc.version,
      category: doc.category,
      chunkIndex: 0,
      text: 'half-written leftover passage',
      page: null,
      heading: null,
      jobId,
      embeddingModel: 'leftover',
      searchText: 'half-written leftover passage',
    },
  ]);
}

/** After recovery: the job completed once, and only its own chunks (and vectors) are there. */
async function expectRecovered(
  app: KbApp['app'],
  deps: KbApp['deps'],
  token: string,
  doc: DocumentDto,
): Promise<void> {
  const job = await waitForJob(app, token, jobOf(doc).id, 'completed');
  expect(job.processed_chunks).toBe(job.total_chunks);
  const indexed = await getDocument(app, token, doc.id);
  expect(indexed.status).toBe('indexed');
  expect(indexed.chunk_count).toBeGreaterThan(0);
  expect(await chunkRows(deps, doc.id)).toBe(indexed.chunk_count);
  expect(await vectorRows(deps, doc.id)).toBe(indexed.chunk_count);
  const leftovers = await countRows(
    deps,
    sql`select count(*)::int as n from kb_chunks where text like 'half-written%'`,
  );
  expect(leftovers).toBe(0);
  expect((await search(app, token, 'vasopressor noradrenaline'))[0]?.document_id).toBe(doc.id);
}

const TEXT = sampleText('vasopressor', 'Noradrenaline Infusion');

describe('restart recovery on the embedded defaults (PGlite on disk)', () => {
  let dataDir: string;
  let running: EmbeddedApp | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'mas-kb-restart-'));
  });
  afterAll(async () => {
    await running?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a job left running by a process that died runs again after the restart', async () => {
    // First process: accepts the upload, then "dies" with the job claimed for an hour.
    running = await startEmbedded(dataDir, { KB_WORKER_ENABLED: 'false' });
    const admin = await createUser(running.app, running.deps, { admin: true });
    const doc = await uploadNew(running.app, admin.access, { file: TEXT, title: 'Pressors' });
    await dieMidJob(running.deps.database.db, doc, 3_600_000);
    expect((await getJob(running.app, admin.access, jobOf(doc).id)).state).toBe('running');
    await running.stop();
    running = undefined;

    // Second process on the same DATA_DIR, with the worker on: nobody else can own the job.
    running = await startEmbedded(dataDir);
    await expectRecovered(running.app, running.deps, admin.access, doc);
  });
});

describe('restart recovery on PostgreSQL + Redis (a second instance takes over)', () => {
  let owner: KbApp | undefined;
  let other: KbApp | undefined;

  afterAll(async () => {
    await other?.close();
    await owner?.close(); // owns the database: last
  });

  it('a running job whose lease lapsed is picked up by another instance', async () => {
    owner = await createKbApp({ backend: 'postgres', env: { KB_WORKER_ENABLED: 'false' } });
    const token = owner.admin.access;
    const doc = await uploadNew(owner.app, token, { file: TEXT, title: 'Pressors' });
    // A runner claimed it with a short lease, then its process died.
    await dieMidJob(owner.deps.database.db, doc, 1500);
    const { databaseUrl, redisPrefix } = owner.deps.config;
    expect(databaseUrl).toBeDefined();
    other = await createKbApp({
      backend: 'postgres',
      shared: { databaseUrl: databaseUrl ?? '', redisPrefix },
      // One file store for both, as in a deployment (there it is WebDAV).
      env: { KB_JOB_LEASE_MS: '2000', DATA_DIR: owner.deps.config.dataDir },
    });
    await expectRecovered(other.app, other.deps, token, doc);
    const job = await getJob(owner.app, token, jobOf(doc).id);
    expect(job.retry_count).toBe(0); // a takeover is not a failure
  });
});

describe.each(['postgres', 'pglite'] as const)('concurrent uploads (%s)', (backend) => {
  let kb: KbApp;
  let token: string;

  beforeAll(async () => {
    kb = await createKbApp({ backend, env: { KB_WORKER_ENABLED: 'false' } });
    token = kb.admin.access;
  });
  afterAll(async () => {
    await kb.close();
  });

  const currentVersions = (docKey: string) =>
    countRows(
      kb.deps,
      sql`select count(*)::int as n from kb_documents where doc_key = ${docKey} and superseded_by is null`,
    );

  /** Every stored original belongs to a document row: nothing orphaned, nothing missing. */
  async function expectStoredMatchesRows(): Promise<void> {
    const rows = await countRows(kb.deps, sql`select count(*)::int as n from kb_documents`);
    const stored = await filesUnder(filesDir(kb.deps));
    expect(stored).toHaveLength(rows);
  }

  it('same content at once under a new doc_key: one 202, one 200 with the same document', async () => {
    const docKey = `same-${randomUUID().slice(0, 8)}`;
    const text = 'Identical content uploaded twice at the same moment.\n';
    const responses = await Promise.all([
      upload(kb.app, token, { file: text, title: 'Same', docKey }),
      upload(kb.app, token, { file: text, title: 'Same', docKey }),
    ]);
    const bodies = responses.map((r) => r.body).join('\n');
    expect(responses.map((r) => r.statusCode).sort(), bodies).toEqual([200, 202]);
    const ids = new Set(responses.map((r) => dataOf<DocumentDto>(r).id));
    expect(ids.size).toBe(1);
    expect(await currentVersions(docKey)).toBe(1);
    await expectStoredMatchesRows();
  });

  it('new content twice at once under a new doc_key: versions 1 and 2, one current', async () => {
    const docKey = `race-${randomUUID().slice(0, 8)}`;
    const responses = await Promise.all([
      upload(kb.app, token, { file: 'First racing content.\n', title: 'Race', docKey }),
      upload(kb.app, token, { file: 'Second racing content.\n', title: 'Race', docKey }),
    ]);
    for (const res of responses) expect(res.statusCode, res.body).toBe(202);
    const docs = responses.map((r) => dataOf<DocumentDto>(r));
    expect(docs.map((d) => d.version).sort()).toEqual([1, 2]);
    expect(await currentVersions(docKey)).toBe(1);
    const first = docs.find((d) => d.version === 1);
    const second = docs.find((d) => d.version === 2);
    expect((await getDocument(kb.app, token, first?.id ?? '')).superseded_by).toBe(second?.id);
    await expectStoredMatchesRows();
  });
});
