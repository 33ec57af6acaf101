/**
 * Writes the OpenAPI documents the service serves at /openapi.json to docs/openapi.json (the API)
 * and docs/openapi-ops.json (the operator server), the copies that client generators, reviewers
 * and `make lint` (Redocly) read. Tests fail when a copy differs, so a route change that forgets
 * `make openapi` does not land.
 *
 *   npx tsx scripts/openapi.ts           write both documents
 *   npx tsx scripts/openapi.ts --check   exit 1 when either is out of date
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { runMigrations } from '../src/db/migrate.js';
import { createDeps } from '../src/deps.js';
import { buildOpsApp } from '../src/modules/ops/app.js';
import { createLogger } from '../src/platform/logger.js';

export const OPENAPI_FILE = path.join(import.meta.dirname, '..', 'docs', 'openapi.json');
export const OPS_OPENAPI_FILE = path.join(import.meta.dirname, '..', 'docs', 'openapi-ops.json');

/** The document as served, formatted as it is committed. */
export const formatDocument = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`;

/** Builds the service on in-memory embedded defaults (nothing listens) and returns its documents. */
async function servedDocuments(): Promise<Map<string, unknown>> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mas-openapi-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', KB_WORKER_ENABLED: 'false' });
  const database = await openDatabase({});
  await runMigrations(database);
  const deps = await createDeps(config, createLogger(config), { database });
  try {
    const documents = new Map<string, unknown>();
    for (const [file, build] of [
      [OPENAPI_FILE, buildApp],
      [OPS_OPENAPI_FILE, buildOpsApp],
    ] as const) {
      const { app } = await build(deps);
      await app.ready();
      documents.set(file, app.swagger());
      await app.close();
    }
    return documents;
  } finally {
    await deps.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  for (const [file, document] of await servedDocuments()) {
    const text = formatDocument(document);
    const name = path.relative(process.cwd(), file);
    if (process.argv.includes('--check')) {
      const committed = await readFile(file, 'utf8').catch(() => '');
      if (committed !== text) {
        process.stderr.write(`${name} is out of date: run \`make openapi\`\n`);
        process.exitCode = 1;
      }
      continue;
    }
    await writeFile(file, text);
    process.stdout.write(`wrote ${name}\n`);
  }
}

if (process.argv[1] === import.meta.filename) await main();
