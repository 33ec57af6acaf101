import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';
import { runMigrations } from '../../src/db/migrate.js';
import { admin, databaseUrl } from './env.js';

export type Backend = 'postgres' | 'pglite';

/** A fresh PostgreSQL database copied from the migrated template; drop it when done. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `mas_test_${randomBytes(6).toString('hex')}`;
  for (let attempt = 0; ; attempt++) {
    try {
      await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`));
      break;
    } catch (err) {
      // Two files copying the template at the same instant can collide; try again shortly.
      if (attempt >= 10) throw err;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
  return {
    url: databaseUrl(name),
    drop: () =>
      admin(async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }),
  };
}

/** An open, migrated database of either backend, and how to dispose of it. */
export async function openTestDatabase(
  backend: Backend,
): Promise<{ database: Database; dispose(): Promise<void> }> {
  if (backend === 'pglite') {
    const database = await openDatabase({});
    await runMigrations(database);
    return { database, dispose: () => database.close() };
  }
  const created = await createTestDatabase();
  const database = await openDatabase({ url: created.url, poolSize: 5 });
  return {
    database,
    dispose: async () => {
      await database.close();
      await created.drop();
    },
  };
}
