import { createHash } from 'node:crypto';

/** The flag's state that evaluation reads. */
export interface Rollout {
  name: string;
  enabled: boolean;
  rolloutPercentage: number;
}

/**
 * The user's bucket for a flag, 0 to 99 (DECISIONS 7): the first four bytes of
 * sha256(`<flag name>:<user id>`) as a big-endian unsigned integer, modulo 100. Each flag buckets
 * users independently, and a user's bucket never changes.
 */
export function bucketOf(flagName: string, userId: string): number {
  const digest = createHash('sha256').update(`${flagName}:${userId}`, 'utf8').digest();
  return digest.readUInt32BE(0) % 100;
}

/**
 * Whether the flag is on for the user: never while disabled, else when the user's bucket is below
 * the rollout percentage. Since the bucket is fixed, raising the percentage only adds users.
 */
export function isOnFor(flag: Rollout, userId: string): boolean {
  if (!flag.enabled || flag.rolloutPercentage <= 0) return false;
  if (flag.rolloutPercentage >= 100) return true;
  return bucketOf(flag.name, userId) < flag.rolloutPercentage;
}
