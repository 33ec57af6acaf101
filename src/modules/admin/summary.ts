import type { Db } from '../../db/client.js';
import type { HealthService } from '../health/service.js';
import { panelUsersRepo } from './users-repo.js';
import type { PanelSummaryDto } from './users-schema.js';

/** Midnight UTC of the day `now` falls on. */
export function startOfUtcDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

/**
 * The dashboard summary (spec 2.9): user and conversation counts in one statement, the status from
 * the readiness probes (each bounded by READY_CHECK_TIMEOUT_MS, run in parallel with the counts),
 * and this instance's uptime.
 */
export class PanelSummaryService {
  constructor(
    private readonly db: Db,
    private readonly health: HealthService,
    private readonly now: () => Date = () => new Date(),
    private readonly uptimeSeconds: () => number = () => process.uptime(),
  ) {}

  async summary(): Promise<PanelSummaryDto> {
    const [counts, readiness] = await Promise.all([
      panelUsersRepo.summaryCounts(this.db, startOfUtcDay(this.now())),
      this.health.readiness(),
    ]);
    return {
      users: {
        total: counts.users_total,
        active: counts.users_active,
        admins: counts.users_admins,
      },
      conversations: { total: counts.conversations_total, today: counts.conversations_today },
      system: {
        status: readiness.status === 'ready' ? 'ok' : 'degraded',
        uptime: Math.floor(this.uptimeSeconds()),
      },
    };
  }
}
