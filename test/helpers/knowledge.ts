import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { sql, type SQL } from 'drizzle-orm';
import { expect } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { queryRows } from '../../src/db/client.js';
import { SYSTEM_CONTEXT } from '../../src/modules/audit/service.js';
import { createDeps, type Deps } from '../../src/deps.js';
import type { DocumentDto, JobDto } from '../../src/modules/knowledge/schema.js';
import type { App } from '../../src/platform/http/types.js';
import { createLogger } from '../../src/platform/logger.js';
import { createTestApp, type TestApp, type TestAppOptions } from './app.js';
import { bearer, createUser, dataOf, type TestUser } from './factories.js';

export type { DocumentDto, JobDto };

export interface SearchHitDto {
  chunk_id: string;
  document_id: string;
  doc_key: string;
  title: string;
  version: number;
  page: number | null;
  heading: string | null;
  snippet: string;
  score: number;
}

/** One part of a multipart/form-data body: a plain field, or a file. */
export type Part =
  | { name: string; value: string }
  | { name: string; filename: string; content: Buffer | string; contentType?: string };

/** A multipart/form-data body and the content-type header that goes with it. */
export function multipartBody(parts: Part[]): { payload: Buffer; contentType: string } {
  const boundary = `----mas-test-${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n`));
    if ('value' in part) {
      chunks.push(Buffer.from(`content-disposition: form-data; name="${part.name}"\r\n\r\n`));
      chunks.push(Buffer.from(part.value, 'utf8'));
    } else {
      chunks.push(
        Buffer.from(
          `content-disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\n` +
            `content-type: ${part.contentType ?? 'application/octet-stream'}\r\n\r\n`,
        ),
      );
      chunks.push(typeof part.content === 'string' ? Buffer.from(part.content) : part.content);
    }
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    payload: Buffer.concat(chunks),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

export interface UploadInput {
  file: Buffer | string;
  filename?: string;
  title?: string;
  category?: string;
  docKey?: string;
}

/** POST /api/admin/kb/documents with `file`, `title`, `category` and optional `doc_key`. */
export async function upload(app: App, token: string, input: UploadInput) {
  const parts: Part[] = [
    { name: 'title', value: input.title ?? 'Test Document' },
    { name: 'category', value: input.category ?? 'guidelines' },
    ...(input.docKey === undefined ? [] : [{ name: 'doc_key', value: input.docKey }]),
    { name: 'file', filename: input.filename ?? 'document.txt', content: input.file },
  ];
  return uploadParts(app, token, parts);
}

/** POST /api/admin/kb/documents with exactly the given parts. */
export async function uploadParts(app: App, token: string, parts: Part[]) {
  const { payload, contentType } = multipartBody(parts);
  return app.inject({
    method: 'POST',
    url: '/api/admin/kb/documents',
    headers: { ...bearer(token), 'content-type': contentType },
    payload,
  });
}

/** Uploads and expects a new version (202, status uploaded, job pending). */
export async function uploadNew(app: App, token: string, input: UploadInput): Promise<DocumentDto> {
  const res = await upload(app, token, input);
  expect(res.statusCode, res.body).toBe(202);
  const doc = dataOf<DocumentDto>(res);
  expect(doc.status).toBe('uploaded');
  expect(doc.job?.state).toBe('pending');
  return doc;
}

/** The document's latest job, which every document returned by the API has. */
export function jobOf(doc: DocumentDto): JobDto {
  if (doc.job === null) throw new Error(`document without a job: ${JSON.stringify(doc)}`);
  return doc.job;
}

export async function getJob(app: App, token: string, id: string): Promise<JobDto> {
  const res = await app.inject({
    method: 'GET',
    url: `/api/admin/kb/jobs/${id}`,
    headers: bearer(token),
  });
  return dataOf<JobDto>(res);
}

export async function getDocument(app: App, token: string, id: string): Promise<DocumentDto> {
  const res = await app.inject({
    method: 'GET',
    url: `/api/admin/kb/documents/${id}`,
    headers: bearer(token),
  });
  return dataOf<DocumentDto>(res);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls the job until `done` holds (default: it reached `state`), failing with its last state
 * after `timeoutMs`.
 */
export async function waitForJob(
  app: App,
  token: string,
  id: string,
  state: JobDto['state'] | ((job: JobDto) => boolean),
  timeoutMs = 20_000,
): Promise<JobDto> {
  const done = typeof state === 'function' ? state : (job: JobDto) => job.state === state;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await getJob(app, token, id);
    if (done(job)) return job;
    if (Date.now() > deadline) {
      throw new Error(
        `job ${id} did not get there in ${String(timeoutMs)} ms: ${JSON.stringify(job)}`,
      );
    }
    await sleep(50);
  }
}

/**
 * Polls the document until its status is `status`. A failed job and its document's status are
 * written one after the other, so a reader may briefly see the job failed and the document not.
 */
export async function waitForDocument(
  app: App,
  token: string,
  id: string,
  status: DocumentDto['status'],
  timeoutMs = 20_000,
): Promise<DocumentDto> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const doc = await getDocument(app, token, id);
    if (doc.status === status) return doc;
    if (Date.now() > deadline) {
      throw new Error(
        `document ${id} is not ${status} after ${String(timeoutMs)} ms: ${JSON.stringify(doc)}`,
      );
    }
    await sleep(50);
  }
}

/** Waits for the document's latest job to complete; returns the document. */
export async function waitIndexed(app: App, token: string, doc: DocumentDto): Promise<DocumentDto> {
  await waitForJob(app, token, jobOf(doc).id, 'completed');
  const indexed = await getDocument(app, token, doc.id);
  expect(indexed.status).toBe('indexed');
  return indexed;
}

export async function search(
  app: App,
  token: string,
  q: string,
  extra: Record<string, string> = {},
): Promise<SearchHitDto[]> {
  const query = new URLSearchParams({ q, limit: '20', ...extra }).toString();
  const res = await app.inject({
    method: 'GET',
    url: `/api/admin/kb/search?${query}`,
    headers: bearer(token),
  });
  return dataOf<{ items: SearchHitDto[] }>(res).items;
}

/** One number from a raw `select count(*)::int as n ...`. */
export async function countRows(deps: Deps, query: SQL): Promise<number> {
  const [row] = await queryRows<{ n: number }>(deps.database.db, query);
  return row?.n ?? -1;
}

export const chunkRows = (deps: Deps, documentId: string) =>
  countRows(deps, sql`select count(*)::int as n from kb_chunks where document_id = ${documentId}`);
export const vectorRows = (deps: Deps, documentId: string) =>
  countRows(deps, sql`select count(*)::int as n from kb_vectors where document_id = ${documentId}`);
export const documentRows = (deps: Deps) =>
  countRows(deps, sql`select count(*)::int as n from kb_documents`);

/** Regular files under `dir` (recursively), relative to it; none when it does not exist. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(
    (err: unknown) => {
      if ((err as { code?: string }).code === 'ENOENT') return [];
      throw err;
    },
  );
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/** The local file store's directory of a test app. */
export const filesDir = (deps: Deps) => path.join(deps.config.dataDir, 'files');

export interface KbApp extends TestApp {
  admin: TestUser;
}

/** A test app with fast job timings and an administrator. */
export async function createKbApp(options: TestAppOptions = {}): Promise<KbApp> {
  const testApp = await createTestApp({
    ...options,
    env: { KB_JOB_SWEEP_MS: '200', KB_JOB_RETRY_BASE_MS: '50', ...options.env },
  });
  try {
    const admin = await createUser(testApp.app, testApp.deps, { admin: true });
    return { ...testApp, admin };
  } catch (err) {
    await testApp.close();
    throw err;
  }
}

export interface EmbeddedApp {
  app: App;
  deps: Deps;
  stop(): Promise<void>;
}

/** The service on the embedded defaults with PGlite on disk under `dataDir` (survives a restart). */
export async function startEmbedded(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<EmbeddedApp> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789',
    KB_JOB_SWEEP_MS: '200',
    KB_JOB_RETRY_BASE_MS: '50',
    ...env,
  });
  const deps = await createDeps(config, createLogger(config));
  const { app } = await buildApp(deps);
  await app.ready();
  return {
    app,
    deps,
    stop: async () => {
      await app.close();
      await deps.close();
    },
  };
}

/** Text with a heading and paragraphs about one distinctive `topic` word. */
export function sampleText(topic: string, heading = 'Clinical Guidance'): string {
  return [
    `# ${heading}`,
    '',
    `The ${topic} protocol applies to adults on the ward. Record observations every four hours.`,
    `Escalate to the registrar when the ${topic} score rises above five.`,
    '',
  ].join('\n');
}

/**
 * Stores `text` and records it as a new upload of `docKey` by `by`, as the upload route does,
 * without going through HTTP; returns the new document's and job's ids.
 */
export async function recordUpload(
  deps: Deps,
  by: { id: string; email: string },
  docKey: string,
  text: string,
): Promise<{ id: string; jobId: string }> {
  const bytes = Buffer.from(text);
  const documentId = randomUUID();
  const storageKey = `kb/${documentId}/original`;
  await deps.files.put(storageKey, Readable.from([bytes]));
  const { job, created } = await deps.knowledge.knowledge.register(
    by,
    {
      documentId,
      storageKey,
      title: `Fixture ${docKey}`,
      category: 'cardiology',
      docKey,
      filename: 'fixture.txt',
      contentType: 'text/plain',
      sizeBytes: bytes.length,
      contentHash: createHash('sha256').update(bytes).digest('hex'),
    },
    SYSTEM_CONTEXT,
  );
  if (!created || job === null) throw new Error('the fixture upload made no new version');
  return { id: documentId, jobId: job.id };
}
