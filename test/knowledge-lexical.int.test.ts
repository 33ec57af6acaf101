import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecondInstance, createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, type TestUser } from './helpers/factories.js';
import { search, uploadNew, waitForJob } from './helpers/knowledge.js';

/**
 * The lexical index (BM25 in a thread of each instance): built from the database, following
 * every instance's changes through kb_search_changes, and this instance's own at once.
 */

/** Polls `probe` until `done` holds, at most `ms`. */
async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > deadline) return value;
    await sleep(100);
  }
}

describe('the lexical index on two instances of one database', () => {
  let a: TestApp;
  let b: TestApp;
  let admin: TestUser;

  beforeAll(async () => {
    a = await createTestApp();
    // Only `a` indexes, so that what it indexed is its own change (seen by its next search) and
    // `b` learns of it through kb_search_changes: with both workers, either may run a job.
    b = await createSecondInstance(a, { env: { KB_WORKER_ENABLED: 'false' } });
    admin = await createUser(a.app, a.deps, { admin: true });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const lexical = (t: TestApp, q: string) => t.deps.knowledge.search.lexical(q, undefined);

  it('finds on one instance what the other indexed, and forgets what it deleted', async () => {
    // Both indexes are built (empty) before the document exists: what follows is catching up.
    expect(await lexical(a, 'zanubrutinib')).toEqual([]);
    expect(await lexical(b, 'zanubrutinib')).toEqual([]);
    const doc = await uploadNew(a.app, admin.access, {
      file: 'Zanubrutinib is a BTK inhibitor. Give zanubrutinib 160 mg twice daily.',
      title: 'Zanubrutinib',
    });
    await waitForJob(a.app, admin.access, doc.job?.id ?? '', 'completed');
    // This instance indexed it: its next search has it.
    expect(await lexical(a, 'zanubrutinib')).toHaveLength(1);
    const onB = await until(
      () => lexical(b, 'zanubrutinib'),
      (ids) => ids.length === 1,
    );
    expect(onB).toEqual(await lexical(a, 'zanubrutinib'));
    const hits = await search(b.app, admin.access, 'zanubrutinib dose');
    expect(hits[0]?.document_id).toBe(doc.id);

    const deleted = await a.app.inject({
      method: 'DELETE',
      url: `/api/admin/kb/documents/${doc.id}`,
      headers: bearer(admin.access),
    });
    expect(deleted.statusCode).toBe(200);
    expect(await lexical(a, 'zanubrutinib')).toEqual([]);
    expect(
      await until(
        () => lexical(b, 'zanubrutinib'),
        (ids) => ids.length === 0,
      ),
    ).toEqual([]);
  });

  it('ranks a new version in place of the old one, on the other instance too', async () => {
    const first = await uploadNew(a.app, admin.access, {
      file: 'Ocrelizumab is given every six months.',
      title: 'Ocrelizumab',
      docKey: 'ocrelizumab',
    });
    await waitForJob(a.app, admin.access, first.job?.id ?? '', 'completed');
    const second = await uploadNew(a.app, admin.access, {
      file: 'Ocrelizumab is given every six months after two starting doses.',
      title: 'Ocrelizumab',
      docKey: 'ocrelizumab',
    });
    await waitForJob(a.app, admin.access, second.job?.id ?? '', 'completed');
    const ids = await until(
      () => search(b.app, admin.access, 'ocrelizumab'),
      (hits) => hits.length === 1 && hits[0]?.document_id === second.id,
    );
    expect(ids.map((h) => h.document_id)).toEqual([second.id]);
    expect(await lexical(a, 'ocrelizumab')).toHaveLength(1);
    expect(
      await until(
        () => lexical(b, 'ocrelizumab'),
        (x) => x.length === 1,
      ),
    ).toHaveLength(1);
  });

  it('reads a word it does not hold as the shortening of a longer one it holds', async () => {
    const doc = await uploadNew(a.app, admin.access, {
      file: 'Toxoplasmosis in pregnancy is treated by a specialist. Cats shed the parasite.',
      title: 'Parasites',
    });
    await waitForJob(a.app, admin.access, doc.job?.id ?? '', 'completed');
    // Once the index holds it (this instance's change, caught up by its next search)...
    await until(
      () => lexical(a, 'toxoplasmosis'),
      (x) => x.length === 1,
    );
    // "toxo" is in no chunk; "toxoplasmosis" is.
    expect(await lexical(a, 'toxo')).toHaveLength(1);
    expect(await lexical(a, 'toxi')).toEqual([]);
  });

  it('finds by the abbreviation a document defines the passages that only spell it out', async () => {
    const filler = (topic: string) =>
      Array.from(
        { length: 9 },
        (_, i) => `Sentence ${String(i)} about ${topic} and its course.`,
      ).join(' ');
    // Far apart, so that they land in different chunks (about 800 characters each).
    const file = [
      `Human granulocytic anaplasmosis (HGA) is spread by ticks. ${filler('ticks')}`,
      `${filler('treatment')} Human granulocytic anaplasmosis is treated with doxycycline.`,
    ].join('\n\n');
    const doc = await uploadNew(a.app, admin.access, { file, title: 'Tick-borne diseases' });
    await waitForJob(a.app, admin.access, doc.job?.id ?? '', 'completed');
    await until(
      () => lexical(a, 'doxycycline'),
      (x) => x.length === 1,
    );
    // Two chunks: the definition's, and the treatment's, which never writes "HGA".
    expect(await lexical(a, 'HGA')).toHaveLength(2);
  });
});
