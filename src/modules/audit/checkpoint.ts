import { createHash, createHmac, hkdfSync, timingSafeEqual, type Hash } from 'node:crypto';
import type { AuditCheckpointRow, AuditTombstoneRow } from '../../db/schema/index.js';
import { canonicalJson } from './hash.js';

/** Binds the derived key and the signed form to this use; a new format takes a new version. */
const PURPOSE = 'audit-checkpoint-v1';

/** The fields a checkpoint's signature covers: every column but the signature itself. */
export type CheckpointFields = Omit<AuditCheckpointRow, 'signature'>;

/**
 * Signs and checks audit checkpoints with HMAC-SHA256. The key is derived (HKDF) from
 * AUDIT_CHECKPOINT_KEY, or else from the JWT signing secret, so the database alone (what an
 * attacker rewriting the log would hold) cannot produce a valid checkpoint. `keyId` names the key
 * without revealing it, so a checkpoint signed with a key since replaced is told apart from a
 * forged one.
 */
export class CheckpointSigner {
  private readonly key: Buffer;
  readonly keyId: string;

  constructor(secret: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'audit-checkpoints', PURPOSE, 32));
    this.keyId = createHmac('sha256', this.key).update('key-id').digest('hex').slice(0, 16);
  }

  sign(fields: CheckpointFields): string {
    return createHmac('sha256', this.key).update(signedForm(fields)).digest('hex');
  }

  /** Why the checkpoint is not genuine, or null when its signature checks out. */
  problem(row: AuditCheckpointRow): string | null {
    if (row.keyId !== this.keyId) return 'checkpoint signed with another key';
    const expected = Buffer.from(this.sign(row), 'hex');
    const given = Buffer.from(row.signature, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected)
      ? null
      : 'checkpoint signature does not match';
  }
}

/** The canonical text signed: fixed order, sorted object keys, instants in ISO form. */
function signedForm(f: CheckpointFields): string {
  return canonicalJson([
    PURPOSE,
    f.id,
    f.createdAt.toISOString(),
    f.throughSeq,
    f.throughHash,
    f.purged,
    f.cutoffs,
    f.tombstoneCount,
    f.tombstonesDigest,
    f.keyId,
  ]);
}

/** The fields of a tombstone its checkpoint vouches for. */
export type TombstoneFields = Omit<AuditTombstoneRow, 'checkpointId'>;

/**
 * A running digest of a checkpoint's tombstones, fed in seq order: the checkpoint signs it, so a
 * tombstone added, removed or changed later (an entry passed off as purged) is found.
 */
export class TombstoneDigest {
  private readonly hash: Hash = createHash('sha256');
  count = 0;

  add(t: TombstoneFields): void {
    this.hash.update(
      `${canonicalJson([t.seq, t.id, t.timestamp.toISOString(), t.action, t.prevHash, t.hash])}\n`,
    );
    this.count += 1;
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}
