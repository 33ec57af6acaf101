import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { createDeps } from '../deps.js';
import { describeAdminError, ensureAdmin } from '../modules/users/bootstrap.js';
import { createLogger } from '../platform/logger.js';

const USAGE = 'usage: npm run admin -- create --email <email> --password <password>';

/** `npm run admin -- create --email E --password P`: creates or promotes an administrator. */
async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { email: { type: 'string' }, password: { type: 'string' } },
    });
  } catch (err) {
    // Unknown option or a missing value: a usage error like any other.
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return 2;
  }
  const { positionals, values } = parsed;
  if (positionals[0] !== 'create' || values.email === undefined || values.password === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const config = loadConfig();
  const deps = await createDeps(config, createLogger({ logLevel: 'warn' }));
  try {
    const outcome = await ensureAdmin(
      { db: deps.database.db, auth: deps.auth, users: deps.users },
      values.email,
      values.password,
      'cli',
    );
    process.stdout.write(`administrator ${values.email.trim()}: ${outcome}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`could not create administrator: ${describeAdminError(err)}\n`);
    return 1;
  } finally {
    await deps.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(err instanceof ConfigError ? `${err.message}\n` : `${String(err)}\n`);
    process.exit(1);
  },
);
