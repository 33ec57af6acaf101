import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlState } from '../src/db/errors.js';
import { SearchService } from '../src/modules/knowledge/search.js';
import { createEmbeddings } from '../src/providers/embeddings/index.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createUser } from './helpers/factories.js';
import { uploadNew, waitForJob } from './helpers/knowledge.js';

/**
 * A search's last step reads the passages from the database under a statement timeout: a database
 * that holds the read (here: a lock another session keeps) fails the search, it does not hang it.
 */
describe('the passages read under a statement timeout (PostgreSQL)', () => {
  let t: TestApp;
  let locker: pg.Client;

  beforeAll(async () => {
    t = await createTestApp();
    locker = new pg.Client({ connectionString: t.deps.config.databaseUrl });
    await locker.connect();
  });
  afterAll(async () => {
    await locker.end();
    await t.close();
  });

  it('fails with the statement timeout while the chunks are locked, and reads once they are not', async () => {
    const admin = await createUser(t.app, t.deps, { admin: true });
    const doc = await uploadNew(t.app, admin.access, {
      file: 'Tenecteplase is given as one bolus over five seconds.',
      title: 'Tenecteplase',
    });
    await waitForJob(t.app, admin.access, doc.job?.id ?? '', 'completed');
    const { knowledge } = t.deps;
    const search = new SearchService(
      t.deps.database.db,
      createEmbeddings(t.deps.config.embeddings),
      knowledge.vectors,
      knowledge.lexical,
      { passagesTimeoutMs: 300 },
    );
    expect(await search.search('tenecteplase bolus', { limit: 5 })).toHaveLength(1);

    await locker.query('begin');
    await locker.query('lock table kb_chunks in access exclusive mode');
    try {
      const failed = await search.search('tenecteplase bolus', { limit: 5 }).then(
        () => null,
        (err: unknown) => err,
      );
      expect(sqlState(failed)).toBe('57014');
    } finally {
      await locker.query('rollback');
    }
    expect(await search.search('tenecteplase bolus', { limit: 5 })).toHaveLength(1);
  });
});
