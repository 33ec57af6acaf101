import pg from 'pg';
import { openDatabase } from '../src/db/client.js';
import { runMigrations } from '../src/db/migrate.js';
import { ADMIN_DATABASE_URL, TEMPLATE_DATABASE, databaseUrl } from './helpers/env.js';

/** Builds the migrated template database every integration test file copies its own from. */
export default async function setup(): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  } finally {
    await admin.end();
  }
  const database = await openDatabase({ url: databaseUrl(TEMPLATE_DATABASE), poolSize: 1 });
  await runMigrations(database);
  await database.close();
}
