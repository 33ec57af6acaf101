import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.js';

export interface AuditStatsDto {
  total: number;
  failures: number;
  last_24h: number;
  oldest: string | null;
  newest: string | null;
  by_family: Record<string, number>;
}

interface FamilyRow {
  family: string;
  entries: string | number;
  failures: string | number;
  recent: string | number;
  /** Epoch milliseconds (the drivers parse raw timestamps differently, numbers alike). */
  oldest: string | number | null;
  newest: string | number | null;
}

const iso = (ms: string | number | null) =>
  ms === null ? null : new Date(Number(ms)).toISOString();

/**
 * The audit log in figures, in one pass over the table: entries per family (the action's first
 * segment), failures, the last 24 hours, the oldest and newest entry.
 */
export async function auditStats(db: Db, now: Date): Promise<AuditStatsDto> {
  const since = new Date(now.getTime() - 86_400_000).toISOString();
  const rows = await queryRows<FamilyRow>(
    db,
    sql`
    SELECT split_part(action, '.', 1) AS family,
           count(*) AS entries,
           count(*) FILTER (WHERE NOT success) AS failures,
           count(*) FILTER (WHERE timestamp >= ${since}::timestamptz) AS recent,
           floor(extract(epoch FROM min(timestamp)) * 1000) AS oldest,
           floor(extract(epoch FROM max(timestamp)) * 1000) AS newest
      FROM audit_logs
     GROUP BY 1
     ORDER BY 1`,
  );
  const stats: AuditStatsDto = {
    total: 0,
    failures: 0,
    last_24h: 0,
    oldest: null,
    newest: null,
    by_family: {},
  };
  for (const row of rows) {
    const entries = Number(row.entries);
    stats.by_family[row.family] = entries;
    stats.total += entries;
    stats.failures += Number(row.failures);
    stats.last_24h += Number(row.recent);
    const oldest = iso(row.oldest);
    const newest = iso(row.newest);
    // ISO 8601 UTC strings of one format order as their instants do.
    if (oldest !== null && (stats.oldest === null || oldest < stats.oldest)) stats.oldest = oldest;
    if (newest !== null && (stats.newest === null || newest > stats.newest)) stats.newest = newest;
  }
  return stats;
}
