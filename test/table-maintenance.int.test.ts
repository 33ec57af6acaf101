import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../src/db/client.js';
import { createTestApp, type TestApp } from './helpers/app.js';

/** Tables never analysed or vacuumed (`reltuples` -1), in every schema. */
const neverAnalysed = (t: TestApp) =>
  queryRows<{ name: string }>(
    t.deps.database.db,
    sql`select s.schemaname || '.' || s.relname as name
      from pg_stat_user_tables s join pg_class c on c.oid = s.relid where c.reltuples < 0`,
  );

describe('the embedded service maintains its tables (PGlite has no autovacuum)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite' });
  });
  afterAll(async () => {
    await t.close();
  });

  it("analyses every table at start, drizzle's own off the search path included", async () => {
    let left = await neverAnalysed(t);
    for (let i = 0; i < 100 && left.length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      left = await neverAnalysed(t);
    }
    expect(left).toEqual([]);
  });
});
