import type { Db } from '../../db/client.js';
import type { AuditCheckpointRow, AuditRow, AuditTombstoneRow } from '../../db/schema/index.js';
import { TombstoneDigest, type CheckpointSigner } from './checkpoint.js';
import { GENESIS_HASH, entryHash } from './hash.js';
import { auditRepo } from './repo.js';
import { retentionRepo } from './retention-repo.js';

export interface BrokenAt {
  /** The entry's id; for a checkpoint that fails, the checkpoint's id. */
  id: string;
  seq: number;
  reason: string;
}

/** Where a walk starts: the chain's beginning, or a point a signed checkpoint vouches for. */
export interface ChainPoint {
  seq: number;
  hash: string;
}

export const GENESIS: ChainPoint = { seq: 0, hash: GENESIS_HASH };

/** A checkpoint waiting for the walk to reach its head, and the digest of its tombstones so far. */
interface OpenCheckpoint {
  row: AuditCheckpointRow;
  digest: TombstoneDigest;
}

/**
 * Checks the chain one element at a time, in seq order: entries (sequence, link, own hash) and
 * the tombstones of purged entries (sequence and link; their hashes are vouched for by their
 * checkpoint's signed digest). At each checkpoint's head it checks the signature, that the
 * chain there has the signed hash, and the tombstones seen against the signed count and digest.
 * Stops at the first failure.
 */
export class ChainWalker {
  prev: ChainPoint;
  checked = 0;
  tombstones = 0;
  broken_at: BrokenAt | null = null;
  private readonly open = new Map<string, OpenCheckpoint>();
  private readonly byHead = new Map<number, OpenCheckpoint[]>();

  constructor(
    private readonly signer: CheckpointSigner | null,
    checkpoints: readonly AuditCheckpointRow[],
    from: ChainPoint = GENESIS,
  ) {
    this.prev = { ...from };
    for (const row of checkpoints) {
      const open = { row, digest: new TombstoneDigest() };
      this.open.set(row.id, open);
      this.byHead.set(row.throughSeq, [...(this.byHead.get(row.throughSeq) ?? []), open]);
    }
  }

  /** False once broken: the walk stops. */
  entry(row: AuditRow): boolean {
    const reason =
      this.linkProblem(row) ??
      (row.hash !== entryHash(row) ? 'entry hash does not match its content' : null);
    if (reason !== null) return this.fail(row.id, row.seq, reason);
    this.checked += 1;
    return this.advance(row);
  }

  tombstone(row: AuditTombstoneRow): boolean {
    const link = this.linkProblem(row);
    if (link !== null) return this.fail(row.id, row.seq, link);
    const open = this.open.get(row.checkpointId);
    if (open === undefined) {
      return this.fail(row.id, row.seq, 'tombstone of no checkpoint, or of one already passed');
    }
    open.digest.add(row);
    this.tombstones += 1;
    return this.advance(row);
  }

  /** After the last element: a checkpoint whose head was never reached vouches for nothing. */
  finish(): void {
    if (this.broken_at !== null) return;
    const [left] = this.open.values();
    if (left !== undefined) {
      this.fail(left.row.id, left.row.throughSeq, 'checkpoint beyond the end of the chain');
    }
  }

  private linkProblem(row: { seq: number; prevHash: string }): string | null {
    if (row.seq !== this.prev.seq + 1) return 'sequence gap';
    return row.prevHash !== this.prev.hash ? 'previous hash does not match' : null;
  }

  private advance(row: { seq: number; hash: string }): boolean {
    this.prev = { seq: row.seq, hash: row.hash };
    for (const open of this.byHead.get(row.seq) ?? []) {
      const reason = this.checkpointProblem(open, row.hash);
      if (reason !== null) return this.fail(open.row.id, row.seq, reason);
      this.open.delete(open.row.id);
    }
    return true;
  }

  private checkpointProblem({ row, digest }: OpenCheckpoint, hashHere: string): string | null {
    const signature =
      this.signer === null ? 'no key to check the checkpoint with' : this.signer.problem(row);
    if (signature !== null) return signature;
    if (row.throughHash !== hashHere) return 'checkpoint hash does not match the chain';
    return digest.count !== row.tombstoneCount || digest.digest() !== row.tombstonesDigest
      ? 'tombstones do not match their checkpoint'
      : null;
  }

  private fail(id: string, seq: number, reason: string): false {
    this.broken_at = { id, seq, reason };
    return false;
  }
}

/**
 * Rows of one table in seq order, read a page at a time, the next page requested while the
 * current one is used (so reading and hashing overlap).
 */
class Cursor<T extends { seq: number }> {
  private rows: T[] = [];
  private i = 0;
  private next: Promise<T[]> | null;

  constructor(
    private readonly fetch: (afterSeq: number) => Promise<T[]>,
    private readonly batch: number,
    afterSeq: number,
  ) {
    this.next = this.request(afterSeq);
  }

  /** The current row, reading the next page when this one is used up; undefined at the end. */
  async peek(): Promise<T | undefined> {
    if (this.i < this.rows.length) return this.rows[this.i];
    if (this.next === null) return undefined;
    this.rows = await this.next;
    this.i = 0;
    const last = this.rows.at(-1);
    this.next =
      this.rows.length === this.batch && last !== undefined ? this.request(last.seq) : null;
    return this.rows[0];
  }

  take(): void {
    this.i += 1;
  }

  private request(afterSeq: number): Promise<T[]> {
    const page = this.fetch(afterSeq);
    // Not awaited when the walk stops early: its failure must not go unhandled.
    page.catch(() => undefined);
    return page;
  }
}

/** Walks entries and tombstones after the walker's position, merged in seq order. */
export async function walkChain(db: Db, walker: ChainWalker, batch: number): Promise<void> {
  const after = walker.prev.seq;
  const entries = new Cursor((s) => auditRepo.pageAfter(db, s, batch), batch, after);
  const tombs = new Cursor((s) => retentionRepo.tombstonesAfter(db, s, batch), batch, after);
  for (;;) {
    const entry = await entries.peek();
    const tomb = await tombs.peek();
    if (tomb !== undefined && (entry === undefined || tomb.seq < entry.seq)) {
      tombs.take();
      if (!walker.tombstone(tomb)) return;
    } else if (entry !== undefined) {
      entries.take();
      if (!walker.entry(entry)) return;
    } else {
      return;
    }
  }
}
