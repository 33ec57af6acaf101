import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import type { Database, Schema } from './client.js';

/** src/db/drizzle, found from here whether running from src (tsx) or dist (tsc output). */
export function migrationsFolder(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'src', 'db', 'drizzle');
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the project root for migrations');
    dir = parent;
  }
}

/** Applies every pending migration; safe when several instances start at once. */
export async function runMigrations(database: Database): Promise<void> {
  const migrationsFolderPath = migrationsFolder();
  await database.withMigrationLock(async () => {
    if (database.kind === 'postgres') {
      await migratePg(database.db as unknown as NodePgDatabase<Schema>, {
        migrationsFolder: migrationsFolderPath,
      });
    } else {
      await migratePglite(database.db as unknown as PgliteDatabase<Schema>, {
        migrationsFolder: migrationsFolderPath,
      });
    }
  });
}
