import { createHash } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);
const DIGEST_PREFIX = 'sha256:';

export interface HashedFields {
  id: string;
  seq: number;
  timestamp: Date;
  action: string;
  actorId: string | null;
  actorEmail: string | null;
  resourceType: string | null;
  resourceId: string | null;
  success: boolean;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  details: Record<string, unknown>;
  prevHash: string;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The form an email takes once redacted; the same digest the database trigger computes. */
export function emailDigest(email: string): string {
  return email.startsWith(DIGEST_PREFIX) ? email : DIGEST_PREFIX + sha256(email);
}

/** JSON with object keys sorted at every depth, so jsonb's own key order cannot change a hash. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
  }
  return value === undefined ? 'null' : JSON.stringify(value);
}

/** The entry hash covers every field and the previous hash; the email only as its digest. */
export function entryHash(e: HashedFields): string {
  return sha256(
    canonicalJson([
      e.id,
      e.seq,
      e.timestamp.toISOString(),
      e.action,
      e.actorId,
      e.actorEmail === null ? null : emailDigest(e.actorEmail),
      e.resourceType,
      e.resourceId,
      e.success,
      e.ip,
      e.userAgent,
      e.requestId,
      e.details,
      e.prevHash,
    ]),
  );
}
