import type { FeatureFlagRow } from '../../db/schema/index.js';
import type { RegionOptions } from '../../platform/layered-cache.js';

/** The one id of the `flags` region: every flag is cached together, as one list. */
export const ALL_FLAGS = 'all';

/**
 * How long the list stays in Redis; every committed change drops it sooner. Short, because a change
 * made while Redis is unreachable cannot drop it: once Redis is back, the old list can be served for
 * what is left of this lifetime. Loading the flags is one small query, so little is lost.
 */
const FLAGS_L2_TTL_MS = 10_000;

/** The list through JSON: the timestamps come back as Dates. */
function decodeFlags(text: string): FeatureFlagRow[] {
  const rows = JSON.parse(text) as (Omit<FeatureFlagRow, 'createdAt' | 'updatedAt'> & {
    createdAt: string;
    updatedAt: string;
  })[];
  return rows.map((row) => ({
    ...row,
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
  }));
}

/**
 * The `flags` region of the cache: all flags, by name, under ALL_FLAGS. `l1TtlMs`
 * (FLAG_CACHE_TTL_MS) bounds how long an instance can miss an invalidation (Redis unreachable).
 */
export function flagCacheRegion(l1TtlMs: number): RegionOptions<FeatureFlagRow[]> {
  return { l1TtlMs, l2TtlMs: FLAGS_L2_TTL_MS, maxEntries: 1, decode: decodeFlags };
}
