import type { Logger } from '../../platform/logger.js';
import type { AuditRetention, PurgeResult } from './retention.js';

/**
 * Runs the audit purge every `intervalMs` in the API process. Every instance schedules it; the
 * purge's lock lets one of them work at a time and the others skip. The first run comes one
 * interval after start, so short-lived processes (the CLI, tests) never purge by surprise.
 */
export class PurgeScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private readonly stop = new AbortController();

  constructor(
    private readonly retention: AuditRetention,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.stop.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.running = this.run().finally(() => {
        this.running = null;
        this.start();
      });
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Stops scheduling, ends a running purge after its current batch, and waits for it. */
  async close(): Promise<void> {
    this.stop.abort();
    clearTimeout(this.timer);
    await this.running;
  }

  private async run(): Promise<void> {
    try {
      this.report(await this.retention.purge(this.stop.signal));
    } catch (err) {
      this.log.error({ err }, 'audit purge failed');
    }
  }

  /** Counts, checkpoint ids and where a chain broke: never an entry's content. */
  private report(result: PurgeResult): void {
    if (result.status === 'purged') {
      this.log.info({ purged: result.purged, checkpoints: result.checkpoints }, 'audit purged');
    }
    // A later batch of a run can still be refused: the chain broke while it purged.
    if (result.broken_at !== null) {
      this.log.error(
        { broken_at: result.broken_at },
        describePurge({ ...result, status: 'refused' }),
      );
    }
  }
}

/** The purge and its schedule, started when AUDIT_RETENTION_ENABLED (the default). */
export function startAuditRetention(
  retention: AuditRetention,
  settings: { enabled: boolean; intervalMs: number },
  log: Logger,
): PurgeScheduler {
  const scheduler = new PurgeScheduler(retention, settings.intervalMs, log);
  if (settings.enabled) scheduler.start();
  return scheduler;
}

/** One line for operators (the CLI): what the purge did, in counts. */
export function describePurge(r: PurgeResult): string {
  switch (r.status) {
    case 'purged': {
      const { ehr, session, error } = r.purged;
      const n = r.checkpoints.length;
      return `audit purge: removed ehr ${String(ehr)}, session ${String(session)}, error ${String(error)} (${String(n)} checkpoint${n === 1 ? '' : 's'})`;
    }
    case 'nothing_expired':
      return 'audit purge: nothing has expired';
    case 'busy':
      return 'audit purge: another instance is purging; nothing done';
    case 'refused':
      return `audit purge refused: the chain does not verify at seq ${String(r.broken_at?.seq)} (${r.broken_at?.reason ?? 'unknown'})`;
  }
}
