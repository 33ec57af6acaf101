import path from 'node:path';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { projectRoot } from '../platform/project.js';
import type { Database, Schema } from './client.js';

/** src/db/drizzle: the SQL is read from the sources, also when running the compiled dist/. */
export const migrationsFolder = (): string => path.join(projectRoot(), 'src', 'db', 'drizzle');

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
