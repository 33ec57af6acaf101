import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PreparedStatements } from './pglite-statements.js';

/** The names and texts of the statements the session holds prepared. */
async function prepared(pg: PGlite): Promise<{ name: string; statement: string }[]> {
  const { rows } = await pg.query<{ name: string; statement: string }>(
    'select name, statement from pg_prepared_statements order by name',
  );
  return rows;
}

describe('PreparedStatements', () => {
  let pg: PGlite;

  beforeAll(async () => {
    pg = await PGlite.create();
    await pg.exec(`
      create table notes (id uuid primary key, tags text[] not null, body jsonb, at timestamptz, n int);
      insert into notes values
        ('00000000-0000-4000-8000-000000000001', '{a,b}', '{"k": [1, 2]}', '2026-01-02T03:04:05Z', 1),
        ('00000000-0000-4000-8000-000000000002', '{}', null, null, 2);
    `);
  });

  afterAll(async () => {
    await pg.close();
  });

  it('answers as PGlite query does, for rows as objects or arrays and for writes', async () => {
    const statements = new PreparedStatements(pg);
    const select = 'select id, tags, body, at, n from notes where id = any($1::uuid[]) order by n';
    const ids = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'];
    for (const options of [{}, { rowMode: 'array' as const }]) {
      const mine = await statements.run(select, [ids], options, false);
      const theirs = await pg.query(select, [ids], options);
      expect(mine).toEqual(theirs);
      expect(mine.rows).toHaveLength(2);
    }
    const insert = 'insert into notes (id, tags, body, at, n) values ($1, $2, $3, $4, $5)';
    const row = ['00000000-0000-4000-8000-000000000003', ['x'], { y: 'é' }, new Date(0), null];
    expect(await statements.run(insert, row, {}, false)).toMatchObject({ affectedRows: 1 });
    const update = 'update notes set n = n + 10 where n is not null';
    const updated = await statements.run(update, [], {}, false);
    expect(updated).toEqual({
      rows: [],
      fields: [],
      command: 'UPDATE',
      affectedRows: 2,
      rowCount: 2,
    });
    const read = await pg.query('select tags, body, at, n from notes where id = $1', [row[0]]);
    expect(read.rows).toEqual([{ tags: ['x'], body: { y: 'é' }, at: new Date(0), n: null }]);
    await pg.query("delete from notes where id = '00000000-0000-4000-8000-000000000003'");
    await pg.query('update notes set n = n - 10');
  });

  it('parses a statement once and runs it by name after that', async () => {
    const statements = new PreparedStatements(pg);
    const sql = 'select n from notes where n = $1';
    for (let i = 0; i < 3; i++) {
      expect((await statements.run(sql, [2], {}, false)).rows).toEqual([{ n: 2 }]);
    }
    const mine = (await prepared(pg)).filter((p) => p.statement === sql);
    expect(mine).toHaveLength(1);
    expect(statements.size).toBe(1);
  });

  it('keeps at most `max` statements, closing the least recently run', async () => {
    const statements = new PreparedStatements(pg, 2);
    const texts = [1, 2, 3].map((k) => `select ${String(k)} as k, count(*)::int as c from notes`);
    for (const sql of [texts[0]!, texts[1]!, texts[0]!, texts[2]!]) {
      const { rows } = await statements.run(sql, [], {}, false);
      expect(rows).toEqual([{ k: Number(/select (\d)/.exec(sql)![1]), c: 2 }]);
    }
    // texts[1] was the least recently run when texts[2] came: it is closed at the next call.
    expect(statements.size).toBe(2);
    await statements.run(texts[0]!, [], {}, false);
    const held = (await prepared(pg)).map((p) => p.statement);
    expect(held).toContain(texts[0]);
    expect(held).toContain(texts[2]);
    expect(held).not.toContain(texts[1]);
  });

  it('does not keep a statement PostgreSQL refused', async () => {
    const statements = new PreparedStatements(pg);
    await expect(statements.run('select nope from notes', [], {}, false)).rejects.toMatchObject({
      code: '42703',
    });
    expect(statements.size).toBe(0);
    expect((await statements.run('select 1 as one', [], {}, false)).rows).toEqual([{ one: 1 }]);
  });

  it('prepares again a statement whose result a schema change altered', async () => {
    await pg.exec('create table shapes (id int primary key); insert into shapes values (1)');
    const statements = new PreparedStatements(pg);
    const sql = 'select * from shapes';
    expect((await statements.run(sql, [], {}, false)).rows).toEqual([{ id: 1 }]);
    await pg.exec('alter table shapes add column side int default 4');
    expect((await statements.run(sql, [], {}, false)).rows).toEqual([{ id: 1, side: 4 }]);
    // Inside a transaction the error has aborted it: it is not retried there, only forgotten.
    await pg.exec('alter table shapes add column colour text');
    await expect(pg.transaction(() => statements.run(sql, [], {}, true))).rejects.toMatchObject({
      code: '0A000',
    });
    expect((await statements.run(sql, [], {}, false)).rows).toEqual([
      { id: 1, side: 4, colour: null },
    ]);
  });

  it('runs inside a transaction, whose rollback undoes its writes but not the statement', async () => {
    const statements = new PreparedStatements(pg);
    const insert = 'insert into notes (id, tags) values ($1, $2)';
    const id = '00000000-0000-4000-8000-000000000009';
    await pg
      .transaction(async () => {
        await statements.run(insert, [id, ['t']], {}, true);
        throw new Error('undo');
      })
      .catch(() => undefined);
    expect((await pg.query('select id from notes where id = $1', [id])).rows).toEqual([]);
    expect(await statements.run(insert, [id, ['t']], {}, false)).toMatchObject({ affectedRows: 1 });
    await pg.query('delete from notes where id = $1', [id]);
  });

  it('keeps only statements that read or write rows', () => {
    for (const sql of [
      'select 1',
      ' WITH x as (select 1) select * from x',
      'insert into t values (1)',
      'update t set a = 1',
      'delete from t',
    ]) {
      expect(PreparedStatements.reusable(sql)).toBe(true);
    }
    for (const sql of [
      'create table t (a int)',
      'vacuum t',
      'set search_path = x',
      'begin',
      'analyze t',
      'selectx',
    ]) {
      expect(PreparedStatements.reusable(sql)).toBe(false);
    }
  });
});
