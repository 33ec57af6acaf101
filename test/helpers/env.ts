import type pg from 'pg';
import { databaseUrlOn, withAdminClient } from './local-servers.js';

/** Where the local servers are; override with TEST_DATABASE_ADMIN_URL / TEST_REDIS_URL. */
export const ADMIN_DATABASE_URL =
  process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export const databaseUrl = (name: string): string => databaseUrlOn(ADMIN_DATABASE_URL, name);

/** Runs `fn` on a connection to the test server's admin database. */
export const admin = <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> =>
  withAdminClient(ADMIN_DATABASE_URL, fn);
