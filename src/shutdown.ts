import type { Deps } from './deps.js';
import type { App } from './platform/http/types.js';
import type { Logger } from './platform/logger.js';

/**
 * Graceful stop: refuse new connections, let in-flight requests finish (at most `timeoutMs`), then
 * cut whatever is left, close the database and Redis, and exit.
 */
export function createShutdown(app: App, deps: Pick<Deps, 'close' | 'log'>, timeoutMs: number) {
  let closing: Promise<void> | undefined;
  return (reason: string): Promise<void> => {
    closing ??= (async () => {
      deps.log.info({ reason }, 'shutting down');
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => {
          resolve('timeout');
        }, timeoutMs);
      });
      const outcome = await Promise.race([app.close().then(() => 'closed' as const), deadline]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        deps.log.warn(
          { timeoutMs },
          'in-flight requests did not finish in time; closing connections',
        );
        app.server.closeAllConnections();
      }
      await deps.close();
      deps.log.info('stopped');
    })();
    return closing;
  };
}

export function installShutdown(app: App, deps: Deps, timeoutMs: number): void {
  onTerminationSignals(deps.log, createShutdown(app, deps, timeoutMs));
}

/** Runs `stop` on SIGTERM or SIGINT, then lets the process end; used by the worker process too. */
export function onTerminationSignals(log: Logger, stop: (reason: string) => Promise<void>): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      void stop(signal).then(
        () => {
          exitWhenDrained(log, 0);
        },
        () => {
          exitWhenDrained(log, 1);
        },
      );
    });
  }
}

/**
 * Lets the process end once its event loop is empty instead of calling process.exit at once: the
 * logger writes asynchronously, and exiting with a line still in flight makes its exit hook retry
 * that write forever when stdout has gone away (EPIPE), so the process would never stop. Should a
 * handle keep the loop alive, exit anyway after a grace period.
 */
function exitWhenDrained(log: Logger, code: number): void {
  process.exitCode = code;
  setTimeout(() => {
    log.warn('handles still open after shutdown; exiting');
    process.exit(code);
  }, 3000).unref();
}
