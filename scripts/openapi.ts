/**
 * Writes the OpenAPI document the service serves at /openapi.json to docs/openapi.json, the copy
 * that client generators, reviewers and `make lint` (Redocly) read. A test fails when the two
 * differ, so a route change that forgets `make openapi` does not land.
 *
 *   npx tsx scripts/openapi.ts           write docs/openapi.json
 *   npx tsx scripts/openapi.ts --check   exit 1 when docs/openapi.json is out of date
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { runMigrations } from '../src/db/migrate.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/platform/logger.js';

export const OPENAPI_FILE = path.join(import.meta.dirname, '..', 'docs', 'openapi.json');

/** The document as served, formatted as it is committed. */
export const formatDocument = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`;

/** Builds the service on in-memory embedded defaults (nothing listens) and returns its document. */
async function servedDocument(): Promise<unknown> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mas-openapi-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', KB_WORKER_ENABLED: 'false' });
  const database = await openDatabase({});
  await runMigrations(database);
  const deps = await createDeps(config, createLogger(config), { database });
  try {
    const { app } = await buildApp(deps);
    await app.ready();
    const document = app.swagger();
    await app.close();
    return document;
  } finally {
    await deps.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const text = formatDocument(await servedDocument());
  if (process.argv.includes('--check')) {
    const committed = await readFile(OPENAPI_FILE, 'utf8').catch(() => '');
    if (committed !== text) {
      process.stderr.write('docs/openapi.json is out of date: run `make openapi`\n');
      process.exit(1);
    }
    return;
  }
  await writeFile(OPENAPI_FILE, text);
  process.stdout.write(`wrote ${path.relative(process.cwd(), OPENAPI_FILE)}\n`);
}

if (process.argv[1] === import.meta.filename) await main();
