import { loadConfig } from '../config.js';
import path from 'node:path';
import { openDatabase } from './client.js';
import { runMigrations } from './migrate.js';

/** `npm run migrate`: applies pending migrations to DATABASE_URL, or the embedded PGlite. */
const config = loadConfig();
const database = await openDatabase({
  url: config.databaseUrl,
  pgliteDir: path.join(config.dataDir, 'pglite'),
});
await runMigrations(database);
await database.close();
process.stdout.write(`migrations applied (${database.kind})\n`);
