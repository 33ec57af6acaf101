import type { UserRow } from '../../db/schema/index.js';
import type { RegionOptions } from '../../platform/layered-cache.js';

/**
 * How long a user row stays in Redis; every change to the user drops it sooner. Also the bound on
 * a change made directly in the database, outside the service.
 */
const USER_L2_TTL_MS = 60_000;

const DATE_FIELDS = [
  'createdAt',
  'updatedAt',
  'lastLogin',
  'failedLoginWindowStart',
  'lockedUntil',
] as const satisfies readonly (keyof UserRow)[];

/** User rows through JSON: the timestamps come back as Dates. */
function decodeUser(text: string): UserRow {
  const row = JSON.parse(text) as Record<string, unknown>;
  for (const field of DATE_FIELDS) {
    const value = row[field];
    row[field] = typeof value === 'string' ? new Date(value) : null;
  }
  return row as unknown as UserRow;
}

/** The `user` region of the cache: ids to rows, for authenticated requests. */
export function userCacheRegion(l1TtlMs: number): RegionOptions<UserRow> {
  return { l1TtlMs, l2TtlMs: USER_L2_TTL_MS, maxEntries: 50_000, decode: decodeUser };
}
