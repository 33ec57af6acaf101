import { sql } from 'drizzle-orm';
import type { Logger } from '../platform/logger.js';
import { queryRows, type Db } from './client.js';

/** How often the embedded database's tables are looked at, ms. */
export const MAINTENANCE_INTERVAL_MS = 10_000;

/**
 * PostgreSQL's autovacuum thresholds (its defaults): a table is analysed once more rows than
 * 50 + 10% of it changed since it last was, and vacuumed once more than 50 + 20% of it are dead
 * rows or more than 1000 + 20% of it were inserted since its last vacuum.
 */
const ANALYZE = { base: 50, scale: 0.1 };
const VACUUM_DEAD = { base: 50, scale: 0.2 };
const VACUUM_INSERTED = { base: 1000, scale: 0.2 };

interface TableStats {
  schema: string;
  name: string;
  /** Rows as of the last vacuum or analyse; -1 when never. */
  reltuples: number;
  modified: number;
  dead: number;
  inserted: number;
}

export interface MaintenanceRun {
  analyzed: string[];
  vacuumed: string[];
}

/**
 * What autovacuum does on a PostgreSQL server, for the embedded PGlite, which runs in single-user
 * mode without it: its tables were never analysed, so the planner guessed their sizes (the
 * knowledge base's passages read ran as a loop over every document, 5 ms instead of 1 at 2,000
 * chunks), and their dead rows were never reclaimed. Every `intervalMs` it reads the tables'
 * counters and vacuums or analyses those past autovacuum's default thresholds, one statement at a
 * time through the one connection (other statements wait behind each; the thresholds keep them
 * rare). Tables never analysed (a new database, or one from before this ran) are analysed at the
 * first run. The counters start again at zero when the process does.
 */
export class TableMaintenance {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | null = null;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly intervalMs = MAINTENANCE_INTERVAL_MS,
  ) {}

  /** Runs now, then every interval after the previous run ends. */
  start(): void {
    this.schedule(0);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One look at every table: what was vacuumed and analysed (vacuum analyses too). */
  async run(): Promise<MaintenanceRun> {
    // The counters of this (only) backend reach the statistics views when flushed.
    await this.db.execute(sql`select pg_stat_force_next_flush()`);
    const tables = await queryRows<TableStats>(
      this.db,
      sql`select s.schemaname as schema, s.relname as name, c.reltuples::float8 as reltuples,
          s.n_mod_since_analyze::float8 as modified, s.n_dead_tup::float8 as dead,
          s.n_ins_since_vacuum::float8 as inserted
        from pg_stat_user_tables s join pg_class c on c.oid = s.relid
        order by s.schemaname, s.relname`,
    );
    const done: MaintenanceRun = { analyzed: [], vacuumed: [] };
    for (const t of tables) {
      if (this.closed) break;
      const work = due(t);
      if (work === undefined) continue;
      // Qualified: not every table is on the search path (drizzle's own is in its schema).
      const table = sql`${sql.identifier(t.schema)}.${sql.identifier(t.name)}`;
      try {
        await this.db.execute(
          work === 'vacuum' ? sql`vacuum (analyze) ${table}` : sql`analyze ${table}`,
        );
      } catch (err) {
        // One table (dropped meanwhile, say) does not keep the others from their turn.
        this.log.warn(
          { err, table: `${t.schema}.${t.name}` },
          'table maintenance failed for a table',
        );
        continue;
      }
      (work === 'vacuum' ? done.vacuumed : done.analyzed).push(t.name);
    }
    return done;
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.run()
        .then((r) => {
          if (r.analyzed.length + r.vacuumed.length > 0) this.log.debug(r, 'tables maintained');
        })
        .catch((err: unknown) => {
          this.log.warn({ err }, 'table maintenance failed; tried again at the next interval');
        })
        .finally(() => {
          this.running = null;
          this.schedule(this.intervalMs);
        });
    }, delayMs);
    this.timer.unref();
  }
}

/** What autovacuum would do to the table now, if anything. */
export function due(
  t: Pick<TableStats, 'reltuples' | 'modified' | 'dead' | 'inserted'>,
): 'vacuum' | 'analyze' | undefined {
  const rows = Math.max(0, t.reltuples);
  const past = (n: number, threshold: { base: number; scale: number }) =>
    n > threshold.base + threshold.scale * rows;
  if (past(t.dead, VACUUM_DEAD) || past(t.inserted, VACUUM_INSERTED)) return 'vacuum';
  if (t.reltuples < 0 || past(t.modified, ANALYZE)) return 'analyze';
  return undefined;
}
