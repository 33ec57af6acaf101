import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dataOf, errorOf } from './helpers/factories.js';
import {
  chunkRows,
  countRows,
  createKbApp,
  getDocument,
  getJob,
  jobOf,
  search,
  upload,
  uploadNew,
  vectorRows,
  waitIndexed,
  type DocumentDto,
  type KbApp,
} from './helpers/knowledge.js';
import { pdfFromPages } from './helpers/pdf.js';

/** Three pages, each with a heading and a paragraph about words found on no other page. */
const GUIDE_PAGES = [
  [
    { heading: 'Hypertension Diagnosis' },
    {
      paragraph:
        'Confirm hypertension with ambulatory monitoring when clinic readings exceed 140/90 mmHg. Repeat the measurement on both arms before deciding.',
    },
  ],
  [
    { heading: 'Asthma Exacerbation' },
    {
      paragraph:
        'Give nebulised salbutamol every twenty minutes during a severe exacerbation. Add ipratropium when the response is poor after the first hour.',
    },
  ],
  [
    { heading: 'Renal Dosing' },
    {
      paragraph:
        'Measure the gentamicin trough level before the third dose in patients with reduced creatinine clearance. Extend the dosing interval when the trough is high.',
    },
  ],
];

describe.each(['postgres', 'pglite'] as const)('knowledge uploads and indexing (%s)', (backend) => {
  let kb: KbApp;
  let token: string;
  const app = () => kb.app;

  beforeAll(async () => {
    kb = await createKbApp({ backend });
    token = kb.admin.access;
  });
  afterAll(async () => {
    await kb.close();
  });

  it('indexes a text file: 202 uploaded/pending, then indexed with chunks and a completed job', async () => {
    const text = [
      '# Sepsis Bundle',
      '',
      'Start broad spectrum antibiotics within one hour of recognising septic shock.',
      'Take blood cultures before the first dose whenever this causes no delay.',
      '',
      '# Fluid Resuscitation',
      '',
      'Give thirty millilitres per kilogram of crystalloid for hypotension or lactate above four.',
      '',
    ].join('\n');
    const doc = await uploadNew(app(), token, {
      file: text,
      filename: 'sepsis.txt',
      title: 'Sepsis Bundle Card',
      category: 'protocols',
    });
    expect(doc).toMatchObject({
      title: 'Sepsis Bundle Card',
      category: 'protocols',
      filename: 'sepsis.txt',
      content_type: 'text/plain',
      size_bytes: Buffer.byteLength(text),
      doc_key: 'sepsis-bundle-card',
      version: 1,
      superseded_by: null,
      indexed_at: null,
    });
    expect(doc.content_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(jobOf(doc)).toMatchObject({ doc_key: 'sepsis-bundle-card', retry_count: 0 });

    const indexed = await waitIndexed(app(), token, doc);
    expect(indexed.chunk_count).toBeGreaterThanOrEqual(2);
    expect(indexed.page_count).toBe(1);
    expect(indexed.indexed_at).not.toBeNull();
    expect(indexed.error).toBeNull();
    const job = await getJob(app(), token, jobOf(doc).id);
    expect(job).toMatchObject({ state: 'completed', total_chunks: indexed.chunk_count });
    expect(job.processed_chunks).toBe(job.total_chunks);
    expect(job.finished_at).not.toBeNull();
    expect(await chunkRows(kb.deps, doc.id)).toBe(indexed.chunk_count);

    const hits = await search(app(), token, 'crystalloid lactate hypotension');
    expect(hits[0]).toMatchObject({
      document_id: doc.id,
      doc_key: 'sepsis-bundle-card',
      page: null,
      heading: 'Fluid Resuscitation',
    });
    expect(hits[0]?.snippet).toMatch(/crystalloid/);
  });

  it("cuts snippets around the query's terms unless a chat turn asks for none", async () => {
    const filler =
      'Review the plan at each visit and record what was agreed with the patient and carers. ';
    const text = `# Wound care\n\n${filler.repeat(5)}Irrigate a contaminated laceration with potable tap water before closure.\n`;
    const doc = await uploadNew(app(), token, {
      file: Buffer.from(text),
      filename: 'wounds.md',
      title: 'Wound Care',
      docKey: 'wound-care',
    });
    await waitIndexed(app(), token, doc);
    const search = kb.deps.knowledge.search;
    const query = 'irrigate laceration tap water';
    const cut = await search.search(query, { limit: 3 });
    const plain = await search.search(query, { limit: 3, snippets: false });
    expect(cut[0]?.documentId).toBe(doc.id);
    // Same passages in the same order, whichever snippet they carry.
    expect(plain.map((r) => [r.chunkId, r.score])).toEqual(cut.map((r) => [r.chunkId, r.score]));
    expect(cut[0]?.snippet).toMatch(/laceration/);
    expect(plain[0]?.snippet).toBe(plain[0]?.text.slice(0, 300));
    expect(plain[0]?.snippet).not.toMatch(/laceration/);
    // Each was cached under its own key: asked again, each answers as before.
    expect((await search.search(query, { limit: 3 }))[0]?.snippet).toBe(cut[0]?.snippet);
    expect((await search.search(query, { limit: 3, snippets: false }))[0]?.snippet).toBe(
      plain[0]?.snippet,
    );
  });

  it('indexes a multi-page PDF: page numbers and headings come back from search', async () => {
    const pdf = await pdfFromPages(GUIDE_PAGES);
    const doc = await uploadNew(app(), token, {
      file: pdf,
      filename: 'guide.pdf',
      title: 'Ward Guide',
      category: 'guidelines',
      docKey: 'ward-guide',
    });
    expect(doc).toMatchObject({ content_type: 'application/pdf', doc_key: 'ward-guide' });
    const indexed = await waitIndexed(app(), token, doc);
    expect(indexed.page_count).toBe(3);
    expect(indexed.chunk_count).toBeGreaterThanOrEqual(3);

    const expectations = [
      { q: 'gentamicin trough creatinine', page: 3, heading: 'Renal Dosing', word: /gentamicin/ },
      { q: 'salbutamol nebulised', page: 2, heading: 'Asthma Exacerbation', word: /salbutamol/ },
      { q: 'ambulatory hypertension', page: 1, heading: 'Hypertension Diagnosis', word: /ambul/ },
    ];
    for (const { q, page, heading, word } of expectations) {
      const hits = await search(app(), token, q);
      expect(hits.length, q).toBeGreaterThan(0);
      const [top] = hits;
      expect(top, q).toMatchObject({ document_id: doc.id, title: 'Ward Guide', page, heading });
      expect(top?.snippet).toMatch(word);
      for (const hit of hits) {
        expect(hit.score).toBeGreaterThanOrEqual(0);
        expect(hit.score).toBeLessThanOrEqual(1);
      }
    }
    const filtered = await search(app(), token, 'gentamicin trough', { category: 'other' });
    expect(filtered.filter((h) => h.document_id === doc.id)).toEqual([]);
  });

  it('a PDF named .txt is a PDF (type by content)', async () => {
    const pdf = await pdfFromPages([[{ paragraph: 'Warfarin dose adjustment by INR.' }]]);
    const doc = await uploadNew(app(), token, { file: pdf, filename: 'notes.txt', title: 'INR' });
    expect(doc.content_type).toBe('application/pdf');
    const indexed = await waitIndexed(app(), token, doc);
    expect(indexed.page_count).toBe(1);
  });

  it('same doc_key and same content: 200 with the existing document, no new version or job', async () => {
    const text = 'Paracetamol maximum daily dose is four grams in adults.\n';
    const first = await uploadNew(app(), token, { file: text, title: 'Paracetamol Dosing' });
    expect(first.doc_key).toBe('paracetamol-dosing');
    const again = await upload(app(), token, { file: text, title: 'Paracetamol Dosing' });
    expect(again.statusCode, again.body).toBe(200);
    const same = dataOf<DocumentDto>(again);
    expect(same.id).toBe(first.id);
    expect(same.version).toBe(1);
    expect(jobOf(same).id).toBe(jobOf(first).id);
    const jobs = await app().inject({
      method: 'GET',
      url: '/api/admin/kb/jobs?doc_key=paracetamol-dosing',
      headers: bearer(token),
    });
    expect(dataOf<{ total: number }>(jobs).total).toBe(1);
  });

  it('same doc_key, new content: version 2 supersedes version 1, whose chunks are never found again', async () => {
    const v1 = await uploadNew(app(), token, {
      file: '# Anticoagulation\n\nBridging with enoxaparin is recommended before surgery.\n',
      title: 'Anticoagulation Policy',
      docKey: 'anticoag',
    });
    await waitIndexed(app(), token, v1);
    expect((await search(app(), token, 'enoxaparin bridging'))[0]?.document_id).toBe(v1.id);

    const v2 = await uploadNew(app(), token, {
      file: '# Anticoagulation\n\nBridging with dalteparin replaces the earlier regimen.\n',
      title: 'Anticoagulation Policy',
      docKey: 'anticoag',
    });
    expect(v2.version).toBe(2);
    expect(v2.id).not.toBe(v1.id);
    const old = await getDocument(app(), token, v1.id);
    expect(old.superseded_by).toBe(v2.id);
    // Its chunks are flagged at once and its vectors dropped.
    const live = await countRows(
      kb.deps,
      sql`select count(*)::int as n from kb_chunks where document_id = ${v1.id} and not superseded`,
    );
    expect(live).toBe(0);
    expect(await vectorRows(kb.deps, v1.id)).toBe(0);
    await waitIndexed(app(), token, v2);

    const oldWord = await search(app(), token, 'enoxaparin');
    expect(oldWord.filter((h) => h.document_id === v1.id)).toEqual([]);
    const anyWord = await search(app(), token, 'anticoagulation bridging regimen enoxaparin');
    expect(anyWord.some((h) => h.document_id === v1.id)).toBe(false);
    expect(anyWord.some((h) => h.document_id === v2.id && h.version === 2)).toBe(true);

    const reindexOld = await app().inject({
      method: 'POST',
      url: `/api/admin/kb/documents/${v1.id}/reindex`,
      headers: bearer(token),
    });
    expect(errorOf(reindexOld, 409).code).toBe('CONFLICT');
  });

  it('a new version supersedes the unfinished job of the old one', async () => {
    // The worker is not started in this app: version 1's job stays pending.
    const idle = await createKbApp({ backend, env: { KB_WORKER_ENABLED: 'false' } });
    try {
      const t = idle.admin.access;
      const v1 = await uploadNew(idle.app, t, { file: 'first draft text\n', title: 'Draft' });
      const v2 = await uploadNew(idle.app, t, { file: 'second draft text\n', title: 'Draft' });
      expect(v2.version).toBe(2);
      const oldJob = await getJob(idle.app, t, jobOf(v1).id);
      expect(oldJob).toMatchObject({ state: 'superseded', superseded_by: jobOf(v2).id });
      expect((await getDocument(idle.app, t, v1.id)).superseded_by).toBe(v2.id);
      expect((await getJob(idle.app, t, jobOf(v2).id)).state).toBe('pending');
    } finally {
      await idle.close();
    }
  });

  it('doc_key defaults to the slug of the title; an explicit one is kept; a bad one is 422', async () => {
    const slugged = await uploadNew(app(), token, {
      file: 'Some text about ÉCG leads.\n',
      title: '  Électro-Cardiogram: 12 Leads! ',
    });
    expect(slugged.doc_key).toBe('electro-cardiogram-12-leads');
    expect(slugged.title).toBe('Électro-Cardiogram: 12 Leads!');

    const explicit = await uploadNew(app(), token, {
      file: 'Other text about leads.\n',
      title: 'Électro-Cardiogram: 12 Leads!',
      docKey: 'ecg.leads_v1',
    });
    expect(explicit).toMatchObject({ doc_key: 'ecg.leads_v1', version: 1 });

    const bad = await upload(app(), token, { file: 'x\n', title: 'X', docKey: 'Not A Key' });
    const error = errorOf(bad, 422);
    expect(error.details).toEqual([expect.objectContaining({ field: 'body.doc_key' })]);
    const noLetters = await upload(app(), token, { file: 'y\n', title: '!!!' });
    expect(errorOf(noLetters, 422).details).toEqual([
      expect.objectContaining({ field: 'body.doc_key' }),
    ]);
  });

  it('lists documents with the status filter and paging', async () => {
    const res = await app().inject({
      method: 'GET',
      url: '/api/admin/kb/documents?status=indexed&limit=2',
      headers: bearer(token),
    });
    const page = dataOf<{ items: DocumentDto[]; total: number; offset: number; limit: number }>(
      res,
    );
    expect(page).toMatchObject({ offset: 0, limit: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.total).toBeGreaterThanOrEqual(4);
    expect(page.items.every((d) => d.status === 'indexed' && d.job !== null)).toBe(true);
    const missing = await app().inject({
      method: 'GET',
      url: '/api/admin/kb/documents/00000000-0000-4000-8000-000000000000',
      headers: bearer(token),
    });
    expect(errorOf(missing, 404).code).toBe('NOT_FOUND');
  });

  it('is for administrators only', async () => {
    const anonymous = await upload(app(), '', { file: 'text\n' });
    expect(anonymous.statusCode).toBe(401);
  });
});
