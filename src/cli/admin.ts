import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { createDeps } from '../deps.js';
import { describePurge } from '../modules/audit/purge-scheduler.js';
import { describeAdminError, describeRefusal, ensureAdmin } from '../modules/users/bootstrap.js';
import { createLogger } from '../platform/logger.js';

const USAGE = [
  'usage: npm run admin -- create --email <email> --password <password>',
  '       npm run admin -- purge-audit',
].join('\n');

/**
 * `npm run admin -- create --email E --password P`: creates an administrator, or promotes the
 * existing account when P is its password (exit 1 when it is not, or the account is deactivated).
 * `npm run admin -- purge-audit`: runs the audit retention purge now (exit 1 when the chain does
 * not verify and nothing was purged).
 */
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
  if (positionals.join(' ') === 'purge-audit' && Object.keys(values).length === 0) {
    return purgeAudit();
  }
  if (positionals[0] !== 'create' || values.email === undefined || values.password === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  return create(values.email, values.password);
}

async function create(emailInput: string, password: string): Promise<number> {
  const email = emailInput.trim();
  const deps = await createDeps(loadConfig(), createLogger({ logLevel: 'warn' }));
  try {
    const { db } = deps.database;
    const result = await ensureAdmin(
      { db, auth: deps.auth, users: deps.users, audit: deps.audit },
      email,
      password,
      'cli',
    );
    if (result.reason !== undefined) {
      process.stderr.write(
        `administrator ${email} not promoted: ${describeRefusal(result.reason)}\n`,
      );
      return 1;
    }
    process.stdout.write(`administrator ${email}: ${result.outcome}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`could not create administrator: ${describeAdminError(err)}\n`);
    return 1;
  } finally {
    await deps.close();
  }
}

async function purgeAudit(): Promise<number> {
  const deps = await createDeps(loadConfig(), createLogger({ logLevel: 'warn' }));
  try {
    const result = await deps.auditRetention.purge();
    process.stdout.write(`${describePurge(result)}\n`);
    return result.status === 'refused' ? 1 : 0;
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
