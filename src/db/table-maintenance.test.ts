import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../platform/logger.js';
import { openDatabase, queryRows, type Database } from './client.js';
import { due, TableMaintenance } from './table-maintenance.js';

describe('due: autovacuum thresholds', () => {
  const table = { name: 't', reltuples: 1000, modified: 0, dead: 0, inserted: 0 };

  it('analyses a table never analysed, and one past 50 + 10% changed rows', () => {
    expect(due({ ...table, reltuples: -1 })).toBe('analyze');
    expect(due({ ...table, modified: 150 })).toBeUndefined();
    expect(due({ ...table, modified: 151 })).toBe('analyze');
  });

  it('vacuums past 50 + 20% dead rows or 1000 + 20% inserted ones', () => {
    expect(due({ ...table, dead: 250, modified: 250 })).toBe('analyze');
    expect(due({ ...table, dead: 251 })).toBe('vacuum');
    expect(due({ ...table, inserted: 1200, modified: 1200 })).toBe('analyze');
    expect(due({ ...table, inserted: 1201 })).toBe('vacuum');
    expect(due({ ...table, reltuples: 0, dead: 51 })).toBe('vacuum');
  });
});

describe('TableMaintenance on PGlite', () => {
  let database: Database;
  const log = createLogger({ logLevel: 'silent' });

  beforeAll(async () => {
    database = await openDatabase({});
    await database.db.execute(sql`create table notes (id int primary key, body text not null)`);
    // Off the search path, as drizzle's own migrations table is.
    await database.db.execute(sql`create schema ledger`);
    await database.db.execute(sql`create table ledger.entries (id int primary key)`);
  });
  afterAll(async () => {
    await database.close();
  });

  const stats = async () =>
    (
      await queryRows<{ reltuples: number; dead: number }>(
        database.db,
        sql`select c.reltuples::float8 as reltuples, s.n_dead_tup::float8 as dead
          from pg_class c join pg_stat_user_tables s on s.relid = c.oid where c.relname = 'notes'`,
      )
    )[0];

  it('analyses what was never analysed, then only what changed enough', async () => {
    const maintenance = new TableMaintenance(database.db, log);
    expect((await stats())?.reltuples).toBe(-1);
    const first = await maintenance.run();
    expect(first.analyzed).toContain('notes');
    expect(first.analyzed).toContain('entries');
    expect((await stats())?.reltuples).toBe(0);
    expect(await maintenance.run()).toEqual({ analyzed: [], vacuumed: [] });

    await database.db.execute(
      sql`insert into notes select n, 'note ' || n from generate_series(1, 300) as n`,
    );
    expect((await maintenance.run()).analyzed).toEqual(['notes']);
    expect((await stats())?.reltuples).toBe(300);
    // 40 changed rows of 300: under 50 + 30.
    await database.db.execute(sql`update notes set body = body || '.' where id <= 40`);
    expect(await maintenance.run()).toEqual({ analyzed: [], vacuumed: [] });
  });

  it('vacuums a table whose dead rows pass the threshold, while a transaction waits its turn', async () => {
    const maintenance = new TableMaintenance(database.db, log);
    // 40 dead rows from the test before, and 200 more: past 50 + 20% of 300.
    await database.db.execute(sql`delete from notes where id > 100`);
    const [, run] = await Promise.all([
      database.db.transaction(async (tx) => {
        await tx.execute(sql`update notes set body = 'kept' where id = 1`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        await tx.execute(sql`update notes set body = 'kept' where id = 2`);
      }),
      maintenance.run(),
    ]);
    expect(run.vacuumed).toEqual(['notes']);
    const after = await stats();
    expect(after?.reltuples).toBe(100);
    expect(after?.dead).toBeLessThan(10);
  });

  it('starts at once and stops when closed', async () => {
    await database.db.execute(
      sql`insert into notes select n, 'more' from generate_series(1000, 1200) as n`,
    );
    const maintenance = new TableMaintenance(database.db, log, 60_000);
    maintenance.start();
    for (let i = 0; i < 100 && (await stats())?.reltuples !== 301; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await maintenance.close();
    expect((await stats())?.reltuples).toBe(301);
  });
});
