import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { sql, type SQL } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
import { markLost } from '../platform/outages.js';
import { openRemotePglite } from './pglite-remote.js';
import * as schema from './schema/index.js';

export type Schema = typeof schema;
/** A database handle or a transaction: repositories take this first. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface Database {
  db: Db;
  kind: 'postgres' | 'pglite';
  ping(): Promise<void>;
  close(): Promise<void>;
  /** The connection pool's counts (PostgreSQL only: PGlite is one connection, in a thread of this process). */
  pool?(): { total: number; idle: number; waiting: number; max: number };
  /** Serialises callers across every instance (pg_advisory_lock on PostgreSQL). */
  withMigrationLock<T>(fn: () => Promise<T>): Promise<T>;
  /** Calls `listener` whenever a new connection is opened (PostgreSQL: the server answers again). */
  onConnect(listener: () => void): void;
  /**
   * PostgreSQL only: a handle on a pool of its own (at most `max` connections, opened as needed)
   * whose connections all run with `statement_timeout = ms`, set as they open. A single statement
   * bounded this way needs no transaction to carry a `set local`: one round trip instead of four
   * (BEGIN, SET, the statement, COMMIT). The same handle for the same `ms`.
   */
  withStatementTimeout?(ms: number, max: number): Db;
}

export interface DatabaseOptions {
  /** postgres:// URL; when absent the embedded PGlite is used. */
  url?: string | undefined;
  /** Directory for PGlite's files; `undefined` keeps it in memory (tests). */
  pgliteDir?: string | undefined;
  poolSize?: number;
  /** How long a query waits for a connection (a free one, or a new one) before it fails. */
  connectTimeoutMs?: number;
}

const MIGRATION_LOCK_KEY = 774_201_001;

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  return opts.url
    ? openPostgres(opts.url, opts.poolSize ?? 10, opts.connectTimeoutMs ?? 10_000)
    : openPglite(opts.pgliteDir);
}

type ConnectCallback = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

/**
 * A pool whose failures to hand out a connection say that the database is lost (see
 * platform/outages.ts): whatever stops it connecting (refused, timed out, the server not accepting
 * connections), no request can be served. Queries (`query` goes through `connect` too) and
 * transactions alike.
 */
class DatabasePool extends pg.Pool {
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | undefined {
    if (callback === undefined) {
      return super.connect().catch((err: unknown) => {
        throw err instanceof Error ? markLost(err, 'postgres') : err;
      });
    }
    super.connect((err, client, done) => {
      callback(err === undefined ? err : markLost(err, 'postgres'), client, done);
    });
    return undefined;
  }
}

function openPostgres(url: string, max: number, connectTimeoutMs: number): Database {
  const newPool = (size: number, statementTimeoutMs?: number) => {
    const created = new DatabasePool({
      connectionString: url,
      max: size,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: connectTimeoutMs,
      ...(statementTimeoutMs === undefined ? {} : { statement_timeout: statementTimeoutMs }),
    });
    // An idle client losing its connection must not crash the process; the next query reconnects.
    created.on('error', () => undefined);
    return created;
  };
  const pool = newPool(max);
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  const bounded = new Map<number, { pool: DatabasePool; db: Db }>();
  return {
    db,
    kind: 'postgres',
    ping: async () => {
      await pool.query('select 1');
    },
    close: async () => {
      await Promise.all([pool.end(), ...[...bounded.values()].map((b) => b.pool.end())]);
    },
    withStatementTimeout: (ms, size) => {
      let entry = bounded.get(ms);
      if (entry === undefined) {
        const timed = newPool(size, ms);
        entry = { pool: timed, db: drizzlePg(timed, { schema }) as unknown as Db };
        bounded.set(ms, entry);
      }
      return entry.db;
    },
    pool: () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max,
    }),
    withMigrationLock: async (fn) => {
      // A connection of its own: migrations run on the pool, which may have a single slot.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
        return await fn();
      } finally {
        await client.end();
      }
    },
    onConnect: (listener) => {
      pool.on('connect', listener);
    },
  };
}

async function openPglite(dir: string | undefined): Promise<Database> {
  if (dir !== undefined) await mkdir(path.dirname(path.resolve(dir)), { recursive: true });
  // PGlite runs in a worker thread: in-process, its statements (synchronous WebAssembly) held the
  // thread that answers HTTP and the sockets.
  const client = await openRemotePglite(dir === undefined ? undefined : path.resolve(dir));
  // drizzle's pglite driver (its session, transactions and migrator) calls only `query(sql,
  // params, { rowMode, parsers })` and `transaction(callback)`, whose `tx.query` is the same, on
  // its client; it keeps the client as `db.$client`, which nothing here reads.
  const db = drizzlePglite(client as unknown as PGlite, { schema }) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    ping: async () => {
      await db.execute(sql`select 1`);
    },
    close: () => client.close(),
    // One process owns a PGlite directory, so there is nobody to serialise against.
    withMigrationLock: (fn) => fn(),
    // In this process (a thread of it): it has no connection to lose.
    onConnect: () => undefined,
  };
}

/**
 * Rows of a raw statement, for queries the builder cannot express (recursive CTEs). Both drivers
 * answer `{ rows }`. Select timestamps as numbers (epoch milliseconds): the drivers' raw parsers
 * differ for timestamps, not for numbers, text, booleans or jsonb.
 */
export async function queryRows<T>(db: Db, query: SQL): Promise<T[]> {
  const result: unknown = await db.execute(query);
  return (result as { rows: T[] }).rows;
}
