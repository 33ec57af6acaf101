import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type pg from 'pg';
import {
  databaseUrlOn,
  deleteRedisPrefix as deleteKeysUnder,
  withAdminClient,
} from '../../test/helpers/local-servers.js';

/** Where the local servers are; override with BENCH_DATABASE_ADMIN_URL / BENCH_REDIS_URL. */
export const ADMIN_DATABASE_URL =
  process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

const admin = <T>(fn: (client: pg.Client) => Promise<T>) => withAdminClient(ADMIN_DATABASE_URL, fn);

/** A fresh, empty database for this run (the service migrates it at start-up). */
export async function createDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `mas_bench_${randomBytes(5).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  return {
    url: databaseUrlOn(ADMIN_DATABASE_URL, name),
    drop: () =>
      admin(async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }),
  };
}

/** Deletes exactly the keys under `prefix` (never FLUSHDB); returns how many. */
export const deleteRedisPrefix = (prefix: string): Promise<number> =>
  deleteKeysUnder(REDIS_URL, prefix);

export async function serverVersions(): Promise<{ postgres: string; redis: string }> {
  const postgres = await admin(async (c) => {
    const res = await c.query<{ server_version: string }>('SHOW server_version');
    return res.rows[0]?.server_version ?? '?';
  });
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const info = await redis.info('server');
    return { postgres, redis: /redis_version:(\S+)/.exec(info)?.[1] ?? '?' };
  } finally {
    redis.disconnect();
  }
}

/** The key structure of a JSON value (values replaced by their type), to compare two answers. */
export function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, shapeOf(v)]),
    );
  }
  return value === null ? 'null' : typeof value;
}
