import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { queryRows } from '../src/db/client.js';
import { sqlState } from '../src/db/errors.js';
import { SearchService } from '../src/modules/knowledge/search.js';
import { createEmbeddings } from '../src/providers/embeddings/index.js';
import { createKbApp, uploadNew, waitIndexed, type KbApp } from './helpers/knowledge.js';

/** A one-line document, uploaded by the app's administrator and indexed. */
async function indexed(t: KbApp, title: string, file: string): Promise<void> {
  await waitIndexed(t.app, t.admin.access, await uploadNew(t.app, t.admin.access, { file, title }));
}

/**
 * A search's last step reads the passages from the database under a statement timeout: a database
 * that holds the read (here: a lock another session keeps) fails the search, it does not hang it.
 */
describe('the passages read under a statement timeout (PostgreSQL)', () => {
  let t: KbApp;
  let locker: pg.Client;

  beforeAll(async () => {
    t = await createKbApp();
    locker = new pg.Client({ connectionString: t.deps.config.databaseUrl });
    await locker.connect();
  });
  afterAll(async () => {
    await locker.end();
    await t.close();
  });

  /** The SQLSTATE `read` fails with while another session holds the chunks locked (null: none). */
  async function stateWhileLocked(read: () => Promise<unknown>): Promise<string | null> {
    await locker.query('begin');
    await locker.query('lock table kb_chunks in access exclusive mode');
    try {
      return await read().then(
        () => null,
        (err: unknown) => sqlState(err) ?? null,
      );
    } finally {
      await locker.query('rollback');
    }
  }

  it('fails with the statement timeout while the chunks are locked, and reads once they are not', async () => {
    await indexed(t, 'Tenecteplase', 'Tenecteplase is given as one bolus over five seconds.');
    const { knowledge } = t.deps;
    const search = new SearchService(
      t.deps.database.db,
      createEmbeddings(t.deps.config.embeddings),
      knowledge.vectors,
      knowledge.lexical,
      { passagesTimeoutMs: 300 },
    );
    expect(await search.search('tenecteplase bolus', { limit: 5 })).toHaveLength(1);

    expect(await stateWhileLocked(() => search.search('tenecteplase bolus', { limit: 5 }))).toBe(
      '57014',
    );
    expect(await search.search('tenecteplase bolus', { limit: 5 })).toHaveLength(1);
  });

  it('reads in one statement on connections that carry the timeout, failing and then reading alike', async () => {
    await indexed(t, 'Reteplase', 'Reteplase is given as two boluses thirty minutes apart.');
    const { knowledge, database } = t.deps;
    const bounded = database.withStatementTimeout?.(300, 2);
    if (bounded === undefined) throw new Error('PostgreSQL offers bounded connections');
    expect(database.withStatementTimeout?.(300, 2)).toBe(bounded);
    const setting = await queryRows(bounded, sql`select current_setting('statement_timeout') as t`);
    expect(setting).toEqual([{ t: '300ms' }]);
    const search = new SearchService(
      database.db,
      createEmbeddings(t.deps.config.embeddings),
      knowledge.vectors,
      knowledge.lexical,
      {},
      undefined,
      bounded,
    );
    const transaction = vi.spyOn(database.db, 'transaction');
    try {
      const best = async () => (await search.search('reteplase', { limit: 5 }))[0]?.title;
      expect(await best()).toBe('Reteplase');
      expect(await stateWhileLocked(() => search.search('reteplase', { limit: 5 }))).toBe('57014');
      expect(await best()).toBe('Reteplase');
      // The service's own search reads the same way: no transaction on the main pool.
      const found = await knowledge.search.search('reteplase given', { limit: 5 });
      expect(found.map((r) => r.title)).toContain('Reteplase');
      expect(transaction).not.toHaveBeenCalled();
    } finally {
      transaction.mockRestore();
    }
  });
});

/**
 * PGlite ignores `statement_timeout` (it has no timer to fire it), so the embedded default reads
 * the passages in one statement: a transaction there would only hold the one connection longer.
 */
describe('the passages read on the embedded default (PGlite)', () => {
  let t: KbApp;

  beforeAll(async () => {
    t = await createKbApp({ backend: 'pglite' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('is one statement, not a transaction, and finds the passage', async () => {
    await indexed(t, 'Alteplase', 'Alteplase is given as an infusion over sixty minutes.');
    const db = t.deps.database.db;
    const transaction = vi.spyOn(db, 'transaction');
    try {
      const found = await t.deps.knowledge.search.search('alteplase infusion', { limit: 5 });
      expect(found.map((r) => r.title)).toEqual(['Alteplase']);
      expect(transaction).not.toHaveBeenCalled();
    } finally {
      transaction.mockRestore();
    }
  });
});
