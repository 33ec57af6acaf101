import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../src/db/client.js';
import { runMigrations } from '../src/db/migrate.js';
import { admin, databaseUrl } from './helpers/env.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

/**
 * Builds the migrated template database that each integration test file copies its own from. The
 * name is unique per run, so runs side by side never touch each other's template.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const name = `mas_template_${randomBytes(5).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const database = await openDatabase({ url: databaseUrl(name), poolSize: 1 });
  await runMigrations(database);
  await database.close();
  project.provide('templateDatabase', name);
  return async () => {
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  };
}
