import { buildApp } from './app.js';
import { buildOpsApp } from './modules/ops/app.js';
import type { App } from './platform/http/types.js';
import { ConfigError, loadConfig } from './config.js';
import { createDeps, type Deps } from './deps.js';
import { describeAdminError, describeRefusal, ensureAdmin } from './modules/users/bootstrap.js';
import { createLogger, type Logger } from './platform/logger.js';
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
  if (config.bootstrapAdmin !== undefined) await bootstrapAdmin(deps, config.bootstrapAdmin, log);
  const { app } = await buildApp(deps);
  installShutdown(app, deps, config.shutdownTimeoutMs);
  await listenOps(deps, app);
  await app.listen({ host: config.host, port: config.port });
  log.info(
    { database: deps.database.kind, store: deps.kv.kind },
    `listening on http://${config.host}:${config.port}`,
  );
  // Built now rather than by the first question (a few seconds at 200,000 chunks, in its thread);
  // with KB_SEARCH_ENGINE=qdrant, Qdrant ranks by terms and no search needs it.
  if (config.searchEngine === 'embedded') {
    deps.knowledge.lexical.warm().catch((err: unknown) => {
      log.warn({ err }, 'lexical index not built at start; the first search builds it');
    });
  }
}

/**
 * The operator server (spec 4.11) on OPS_HOST:OPS_PORT, closed when the API closes; OPS_PORT=off:
 * none. A port already taken stops start-up, as the API's own port does.
 */
async function listenOps(deps: Deps, api: App): Promise<void> {
  const { port, host } = deps.config.ops;
  if (port === null) return;
  const { app: ops } = await buildOpsApp(deps);
  api.addHook('onClose', async () => {
    await ops.close();
  });
  const address = await ops.listen({ host, port });
  deps.log.info(`operator endpoints on ${address}`);
}

/**
 * BOOTSTRAP_ADMIN_EMAIL/PASSWORD: a password that breaks the rules stops start-up; an existing
 * account that is not promoted (not its password, deactivated, demoted) is a warning, and the
 * service starts without promoting it.
 */
async function bootstrapAdmin(
  deps: Deps,
  { email, password }: { email: string; password: string },
  log: Logger,
): Promise<void> {
  try {
    const { db } = deps.database;
    const result = await ensureAdmin(
      { db, auth: deps.auth, users: deps.users, audit: deps.audit },
      email,
      password,
      'bootstrap',
    );
    if (result.reason !== undefined) {
      const { outcome, reason, userId } = result;
      log.warn(
        { outcome, reason, user_id: userId },
        `bootstrap administrator not promoted: ${describeRefusal(reason)}`,
      );
    } else {
      log.info({ outcome: result.outcome }, 'bootstrap administrator checked');
    }
  } catch (err) {
    log.fatal(
      `BOOTSTRAP_ADMIN_EMAIL/BOOTSTRAP_ADMIN_PASSWORD rejected: ${describeAdminError(err)}`,
    );
    await deps.close();
    process.exit(1);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `start-up failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
