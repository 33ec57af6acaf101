import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chunkRows,
  createKbApp,
  jobOf,
  sampleText,
  uploadNew,
  vectorRows,
  waitForDocument,
  waitForJob,
  waitIndexed,
  type DocumentDto,
  type KbApp,
} from './helpers/knowledge.js';
import {
  encryptedBombPdf,
  inflationBombPdf,
  manyPagesPdf,
  nestedFormsPdf,
} from './helpers/hostile-pdf.js';

/**
 * Issue 9, item 3: extraction budgets (DECISIONS 6). Each hostile document is built by
 * test/helpers/hostile-pdf.ts; each must fail its job with `error_details.code`
 * `EXTRACTION_LIMIT` (naming the budget), write nothing, and leave the worker able to run the next
 * job.
 */

const MiB = 1024 * 1024;

/** Waits for the job to fail on `limit`; returns the failed document. */
async function expectLimit(kb: KbApp, doc: DocumentDto, limit: string): Promise<DocumentDto> {
  const token = kb.admin.access;
  const job = await waitForJob(kb.app, token, jobOf(doc).id, 'failed', 60_000);
  expect(job.error_details).toMatchObject({ code: 'EXTRACTION_LIMIT', limit, retryable: false });
  expect(job.retry_count).toBe(0);
  const failed = await waitForDocument(kb.app, token, doc.id, 'failed');
  expect(failed.error).toBe(job.error_details?.message);
  expect(await chunkRows(kb.deps, doc.id)).toBe(0);
  expect(await vectorRows(kb.deps, doc.id)).toBe(0);
  return failed;
}

/** A small document still indexes: the worker survived the previous job. */
async function expectNextJobRuns(kb: KbApp, topic: string): Promise<void> {
  const doc = await uploadNew(kb.app, kb.admin.access, {
    file: sampleText(topic),
    title: `After ${topic}`,
  });
  await waitIndexed(kb.app, kb.admin.access, doc);
}

describe.each(['postgres', 'pglite'] as const)(
  'extraction budgets (%s)',
  { timeout: 90_000 },
  (backend) => {
    let kb: KbApp;
    // The 2 s CPU budget has its own app: a starved thread on a loaded machine can spend 2 s
    // before it reaches the checks of the other budgets, which keep the default.
    let cpu: KbApp;

    beforeAll(async () => {
      [kb, cpu] = await Promise.all([
        createKbApp({
          backend,
          env: { KB_MAX_DECODED_MB: '8', KB_MAX_PAGES: '20', KB_MAX_CHUNKS: '10' },
        }),
        createKbApp({ backend, env: { KB_MAX_CPU_SECONDS: '2' } }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([kb.close(), cpu.close()]);
    });

    const upload = (app: KbApp, file: Buffer | string, title: string) =>
      uploadNew(app.app, app.admin.access, { file, title });

    it('a content stream inflating past KB_MAX_DECODED_MB fails with decoded_bytes', async () => {
      const doc = await upload(kb, inflationBombPdf(64 * MiB), 'Inflation bomb');
      const failed = await expectLimit(kb, doc, 'decoded_bytes');
      expect(failed.error).toMatch(/decoded stream data/i);
      await expectNextJobRuns(kb, 'bronchiolitis');
    });

    it('more pages than KB_MAX_PAGES fails with pages', async () => {
      const doc = await upload(kb, manyPagesPdf(21), 'Many pages');
      const failed = await expectLimit(kb, doc, 'pages');
      expect(failed.error).toMatch(/21 pages/);
    });

    it('more chunks than KB_MAX_CHUNKS fails with chunks before any chunk is written', async () => {
      const text = Array.from({ length: 12 }, (_, i) => `# Section ${i + 1}\n\nBody ${i + 1}.\n`);
      const doc = await upload(kb, text.join('\n'), 'Many chunks');
      const failed = await expectLimit(kb, doc, 'chunks');
      expect(failed.error).toMatch(/10 chunks/);
    });

    it('30 nested form XObjects run out of KB_MAX_CPU_SECONDS; the next job runs', async () => {
      const doc = await upload(cpu, nestedFormsPdf(30), 'Nested forms');
      const failed = await expectLimit(cpu, doc, 'cpu_time');
      expect(failed.error).toMatch(/2 s/);
      await expectNextJobRuns(cpu, 'anaphylaxis');
    });
  },
);

describe(
  'the default budgets stop the attacks of the issue (postgres)',
  { timeout: 90_000 },
  () => {
    let kb: KbApp;

    beforeAll(async () => {
      kb = await createKbApp();
    });
    afterAll(async () => {
      await kb.close();
    });

    it.each([
      ['', inflationBombPdf, 'pneumothorax'],
      [', encrypted with an empty password (pdf.js decrypts it)', encryptedBombPdf, 'haemothorax'],
    ])(
      'a 3 MB PDF inflating to 3 GiB%s fails with decoded_bytes, and memory is given back',
      async (_how, make, topic) => {
        const pdf = make(3 * 1024 * MiB);
        expect(pdf.length).toBeLessThan(4 * MiB);
        const before = process.memoryUsage.rss();
        const doc = await uploadNew(kb.app, kb.admin.access, { file: pdf, title: '3 GiB bomb' });
        const failed = await expectLimit(kb, doc, 'decoded_bytes');
        expect(failed.error).toMatch(/200 MB/);
        // Unbounded, pdf.js held the whole 3 GiB (6.5 GB RSS in the issue); counted, nothing is kept.
        expect(process.memoryUsage.rss() - before).toBeLessThan(1024 * MiB);
        await expectNextJobRuns(kb, topic);
      },
    );

    it('5,001 pages fail with pages', async () => {
      const doc = await uploadNew(kb.app, kb.admin.access, {
        file: manyPagesPdf(5001),
        title: 'Too many pages',
      });
      const failed = await expectLimit(kb, doc, 'pages');
      expect(failed.error).toMatch(/5001 pages; at most 5000/);
    });
  },
);

describe.each(['postgres', 'pglite'] as const)(
  'the worker heap limit (%s)',
  { timeout: 90_000 },
  (backend) => {
    let kb: KbApp;

    beforeAll(async () => {
      kb = await createKbApp({
        backend,
        env: { KB_WORKER_MAX_HEAP_MB: '64', KB_MAX_CHUNKS: '1000000' },
      });
    });
    afterAll(async () => {
      await kb.close();
    });

    it('a document needing more heap ends its worker thread: memory, and a new thread takes the next job', async () => {
      // 40 MB of one-line sections: its text alone is most of a 64 MB heap, its lines far more.
      const text = '# Sepsis\nGive antibiotics.\n'.repeat(Math.ceil((40 * MiB) / 27));
      const doc = await uploadNew(kb.app, kb.admin.access, { file: text, title: 'Heap eater' });
      const failed = await expectLimit(kb, doc, 'memory');
      expect(failed.error).toMatch(/64 MB/);
      await expectNextJobRuns(kb, 'hyponatraemia');
    });
  },
);
