import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createDeps } from './deps.js';
import { describeAdminError, ensureAdmin } from './modules/users/bootstrap.js';
import { createLogger } from './platform/logger.js';
import { installShutdown } from './shutdown.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger(config);
  const deps = await createDeps(config, log);
  if (config.bootstrapAdmin !== undefined) {
    const { email, password } = config.bootstrapAdmin;
    try {
      const outcome = await ensureAdmin(
        { db: deps.database.db, auth: deps.auth, users: deps.users },
        email,
        password,
        'bootstrap',
      );
      log.info({ outcome }, 'bootstrap administrator checked');
    } catch (err) {
      log.fatal(
        `BOOTSTRAP_ADMIN_EMAIL/BOOTSTRAP_ADMIN_PASSWORD rejected: ${describeAdminError(err)}`,
      );
      await deps.close();
      process.exit(1);
    }
  }
  const { app } = await buildApp(deps);
  installShutdown(app, deps, config.shutdownTimeoutMs);
  await app.listen({ host: config.host, port: config.port });
  log.info(
    { database: deps.database.kind, store: deps.kv.kind },
    `listening on http://${config.host}:${config.port}`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(
    `start-up failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
