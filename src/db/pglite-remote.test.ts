import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { integer, pgTable, timestamp } from 'drizzle-orm/pg-core';
import { drizzle, type PgliteDatabase } from 'drizzle-orm/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from './client.js';
import { sqlState } from './errors.js';
import { openRemotePglite, PgliteHost, type RemotePglite } from './pglite-remote.js';

const stamps = pgTable('stamps', {
  id: integer('id').primaryKey(),
  at: timestamp('at', { withTimezone: true, mode: 'string' }).notNull(),
  on: timestamp('on', { withTimezone: true, mode: 'date' }).notNull(),
});

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(Error);
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('PGlite in a worker thread', () => {
  let remote: RemotePglite;
  let db: PgliteDatabase;
  /** PGlite in this thread, as the service used it before: what the thread must answer alike. */
  let local: PGlite;
  let localDb: PgliteDatabase;

  beforeAll(async () => {
    [remote, local] = await Promise.all([
      openRemotePglite(undefined),
      PGlite.create().then(async (pg) => {
        await pg.waitReady;
        return pg;
      }),
    ]);
    db = drizzle(remote as unknown as PGlite);
    localDb = drizzle(local);
    for (const d of [db, localDb]) {
      await d.execute(sql`create table items (id int primary key, name text not null unique)`);
      await d.execute(
        sql`create table stamps (id int primary key, "at" timestamptz not null, "on" timestamptz not null)`,
      );
    }
  });

  afterAll(async () => {
    await remote.close();
    await local.close();
  });

  async function itemIds(): Promise<number[]> {
    const { rows } = await remote.query<{ id: number }>('select id from items order by id');
    return rows.map((r) => r.id);
  }

  it('binds parameters and answers in both row modes', async () => {
    const query = 'select $1::int as a, $2::text as b, $3::boolean as c, $4::jsonb as d';
    const params = [7, 'seven', true, JSON.stringify({ n: 7 })];
    const objects = await remote.query(query, params);
    expect(objects.rows).toEqual([{ a: 7, b: 'seven', c: true, d: { n: 7 } }]);
    expect(objects.fields.map((f) => f.name)).toEqual(['a', 'b', 'c', 'd']);
    const arrays = await remote.query(query, params, { rowMode: 'array' });
    expect(arrays.rows).toEqual([[7, 'seven', true, { n: 7 }]]);
    expect(arrays).toEqual(await local.query(query, params, { rowMode: 'array' }));

    const bytes = await remote.query<{ b: Uint8Array }>('select $1::bytea as b', [
      new Uint8Array([1, 2, 255]),
    ]);
    expect(Array.from(bytes.rows[0]?.b ?? [])).toEqual([1, 2, 255]);

    const inserted = await remote.query('insert into items values (100, $1), (101, $2)', [
      'x',
      'y',
    ]);
    expect(inserted.affectedRows).toBe(2);
    await remote.query('delete from items');
  });

  it('keeps the statements that read and write rows prepared, in and out of transactions', async () => {
    const read = 'select name from items where id = $1';
    const write = 'insert into items values ($1, $2)';
    await remote.transaction(async (tx) => {
      await tx.query(write, [200, 'kept']);
      expect((await tx.query(read, [200])).rows).toEqual([{ name: 'kept' }]);
    });
    expect((await remote.query(read, [200])).rows).toEqual([{ name: 'kept' }]);
    const { rows } = await remote.query<{ statement: string }>(
      'select statement from pg_prepared_statements',
    );
    const held = rows.map((r) => r.statement);
    expect(held.filter((s) => s === read)).toHaveLength(1);
    expect(held).toContain(write);
    await remote.query('delete from items');
  });

  it('keeps timestamps as text through drizzle, as PGlite in this thread does', async () => {
    const query = sql`select '2024-03-04 05:06:07.891+00'::timestamptz as t, '2024-03-04'::date as d,
      interval '1 day 2 hours' as i, array['2024-03-04 05:06:07+00'::timestamptz] as ta`;
    const remoteRows = (await db.execute(query)).rows;
    expect(remoteRows).toEqual((await localDb.execute(query)).rows);
    expect(typeof remoteRows[0]?.t).toBe('string');

    const row = { id: 1, at: '2024-03-04 05:06:07.891+00', on: new Date('2024-03-04T05:06:07Z') };
    await db.insert(stamps).values(row);
    await localDb.insert(stamps).values(row);
    const selected = await db.select().from(stamps);
    expect(selected).toEqual(await localDb.select().from(stamps));
    expect(typeof selected[0]?.at).toBe('string');
    expect(selected[0]?.on).toEqual(row.on);
  });

  it('commits a transaction, and rolls back one whose callback throws', async () => {
    await db.transaction(async (tx) => {
      await tx.execute(sql`insert into items values (1, 'one')`);
      await tx.execute(sql`insert into items values (2, 'two')`);
    });
    const thrown = await rejection(
      db.transaction(async (tx) => {
        await tx.execute(sql`insert into items values (3, 'three')`);
        throw new Error('changed my mind');
      }),
    );
    expect(thrown.message).toBe('changed my mind');
    // A statement failing half way: the row before it is not kept either.
    await rejection(
      remote.transaction(async (tx) => {
        await tx.query(`insert into items values (4, 'four')`);
        await tx.query(`insert into items values (5, 'one')`);
      }),
    );
    expect(await itemIds()).toEqual([1, 2]);
    await remote.query('delete from items');
  });

  it('rolls back a nested transaction to its savepoint only', async () => {
    await db.transaction(async (tx) => {
      await tx.execute(sql`insert into items values (1, 'outer')`);
      const nested = await rejection(
        tx.transaction(async (inner) => {
          await inner.execute(sql`insert into items values (2, 'inner')`);
          throw new Error('inner only');
        }),
      );
      expect(nested.message).toBe('inner only');
      await tx.transaction(async (inner) => {
        await inner.execute(sql`insert into items values (3, 'kept')`);
      });
    });
    expect(await itemIds()).toEqual([1, 3]);
    await remote.query('delete from items');
  });

  it("keeps a PostgreSQL error's SQLSTATE and fields", async () => {
    await db.execute(sql`insert into items values (1, 'same')`);
    const viaDrizzle = await rejection(db.execute(sql`insert into items values (2, 'same')`));
    expect(sqlState(viaDrizzle)).toBe('23505');

    const insert = `insert into items values (3, 'same')`;
    await local.query(`insert into items values (1, 'same')`);
    const [remoteError, localError] = await Promise.all([
      rejection(remote.query(insert)),
      rejection(local.query(insert)),
    ]);
    const fields = [
      'name',
      'message',
      'code',
      'severity',
      'detail',
      'schema',
      'table',
      'constraint',
    ];
    const pick = (e: Error) =>
      Object.fromEntries(fields.map((k) => [k, (e as unknown as Record<string, unknown>)[k]]));
    expect(pick(remoteError)).toEqual(pick(localError));
    expect(pick(remoteError)).toMatchObject({ code: '23505', constraint: 'items_name_key' });
    await remote.query('delete from items');
    await local.query('delete from items');
  });

  it('runs a statement sent outside an open transaction after that transaction', async () => {
    const order: string[] = [];
    let outside: Promise<number> | undefined;
    await rejection(
      remote.transaction(async (tx) => {
        await tx.query(`insert into items values (1, 'first')`);
        outside = remote
          .query<{ n: number }>('select count(*)::int as n from items')
          .then(({ rows }) => {
            order.push('outside');
            return rows[0]?.n ?? -1;
          });
        // Sent after the statement outside: it runs first all the same.
        await tx.query(`insert into items values (2, 'second')`);
        order.push('transaction');
        throw new Error('roll back');
      }),
    );
    // On the one connection, a statement run inside the transaction would have seen its rows.
    expect(await outside).toBe(0);
    expect(order).toEqual(['transaction', 'outside']);
  });

  it('sends a transaction’s first statement right behind its BEGIN, not after BEGIN’s answer', async () => {
    // A host of its own, to count the calls waiting for an answer.
    const host = new PgliteHost();
    const own = await openRemotePglite(undefined, host);
    const waiting = () => (host as unknown as { calls: Map<number, unknown> }).calls.size;
    try {
      let sentWithBegin = 0;
      await own.transaction(async (tx) => {
        const created = tx.query('create table t (x int)');
        sentWithBegin = waiting();
        await created;
        await tx.query('insert into t values (1)');
      });
      // BEGIN and the first statement were both on their way before either was answered.
      expect(sentWithBegin).toBe(2);
      expect((await own.query('select x from t')).rows).toEqual([{ x: 1 }]);
      // A transaction that fails right behind its BEGIN rolls back as before.
      await rejection(
        own.transaction(async (tx) => {
          await tx.query('insert into t values (2)');
          await tx.query('insert into missing values (3)');
        }),
      );
      expect((await own.query('select x from t')).rows).toEqual([{ x: 1 }]);
    } finally {
      await own.close();
      await host.terminate();
    }
  });

  it("keeps this thread's event loop running while a long statement runs", async () => {
    const order: string[] = [];
    const long = remote
      .query('select count(*) from generate_series(1, 5000000)')
      .then(() => order.push('statement'));
    // In this thread PGlite would run the whole statement before the loop turns (statement first).
    setImmediate(() => order.push('immediate'));
    await long;
    expect(order).toEqual(['immediate', 'statement']);
  }, 60_000);

  it('refuses query options it cannot reproduce in the thread', async () => {
    const parse = await rejection(remote.query('select 1', [], { parsers: { 23: Number } }));
    expect(parse.message).toMatch(/only identity parsers/);
    const types = await rejection(remote.query('select $1', [1], { paramTypes: [23] }));
    expect(types.message).toMatch(/paramTypes/);
  });
});

describe('the end of the thread', () => {
  it('fails the waiting calls and every later one when the thread dies', async () => {
    // A host of its own: the process's shared one serves the other tests.
    const host = new PgliteHost();
    const client = await openRemotePglite(undefined, host);
    const waiting = client.query('select count(*) from generate_series(1, 500000000)');
    await host.terminate();
    expect((await rejection(waiting)).message).toMatch(/PGlite thread exited/);
    expect((await rejection(client.query('select 1'))).message).toMatch(/PGlite thread exited/);
    expect((await rejection(client.transaction(() => Promise.resolve()))).message).toMatch(
      /PGlite thread exited/,
    );
    // Nothing is left to close.
    await client.close();
    // The next database opens in a new shared thread.
    const next = await openRemotePglite(undefined);
    expect((await next.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    await next.close();
  });

  it('holds several databases in one thread, each its own', async () => {
    const [a, b] = await Promise.all([openRemotePglite(undefined), openRemotePglite(undefined)]);
    await a.query('create table t (x int)');
    await a.query('insert into t values (1)');
    expect((await rejection(b.query('select x from t'))).message).toMatch(/does not exist/);
    await b.close();
    expect((await a.query('select x from t')).rows).toEqual([{ x: 1 }]);
    await a.close();
  });

  it('closes the database, then refuses calls', async () => {
    const database = await openDatabase({});
    expect(database.kind).toBe('pglite');
    await database.ping();
    await database.close();
    const refused = await rejection(database.ping());
    expect(refused.cause).toBeInstanceOf(Error);
    expect((refused.cause as Error).message).toMatch(/PGlite is closed/);
  });

  it('lets the process exit once idle, not while a call waits', async () => {
    const entry = fileURLToPath(new URL('./pglite-remote.ts', import.meta.url));
    // Never closed: an idle thread must not keep the process alive, and the awaited calls must.
    const code = [
      `const { openRemotePglite } = await import(${JSON.stringify(entry)});`,
      `const client = await openRemotePglite(undefined);`,
      `const { rows } = await client.query('select 41 + 1 as n');`,
      `console.log(JSON.stringify(rows));`,
    ].join('\n');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '--eval', code],
      { timeout: 60_000 },
    );
    expect(stdout.trim()).toBe('[{"n":42}]');
  }, 90_000);
});
