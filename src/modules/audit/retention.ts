import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { AuditCheckpointRow } from '../../db/schema/index.js';
import { ChainWalker, walkChain, type BrokenAt, type ChainPoint } from './chain.js';
import { TombstoneDigest, type CheckpointSigner } from './checkpoint.js';
import {
  EXPIRING_FAMILIES,
  cutoffsAt,
  noCounts,
  type ExpiringFamily,
  type FamilyCounts,
  type RetentionDays,
} from './families.js';
import { auditRepo } from './repo.js';
import { retentionRepo, type ExpiredEntry } from './retention-repo.js';
import { SYSTEM_CONTEXT, VERIFY_BATCH, type AuditService } from './service.js';

export interface PurgeResult {
  /**
   * `purged`: some entries were removed; `nothing_expired`; `busy`: another instance was purging;
   * `refused`: the chain did not verify, so nothing was removed or signed (`broken_at` says where).
   */
  status: 'purged' | 'nothing_expired' | 'busy' | 'refused';
  purged: FamilyCounts;
  /** The checkpoints written, one per batch. */
  checkpoints: string[];
  broken_at: BrokenAt | null;
}

type Batch =
  | { kind: 'nothing_expired' | 'busy' }
  | { kind: 'refused'; broken_at: BrokenAt }
  | { kind: 'purged'; counts: FamilyCounts; checkpointId: string; more: boolean; at: ChainPoint };

/** Where the previous batch of this run left the chain: its checkpoint and its own entry. */
interface Resume {
  checkpointId: string;
  at: ChainPoint;
}

const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/**
 * The retention purge (docs/operations.md "Retention"). Each batch is one transaction that, under
 * a lock only one instance gets: verifies the chain up to its head, writes a signed checkpoint of
 * that head and of the tombstones it is about to leave, replaces up to `batch` expired entries by
 * their tombstones, and audits itself (`audit.purged`). The first batch verifies the whole chain;
 * a later one only what follows its own checkpoint, unless another instance purged in between.
 */
export class AuditRetention {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
    private readonly signer: CheckpointSigner,
    private readonly settings: { days: RetentionDays; batch: number },
    private readonly now: () => Date,
  ) {}

  /** Purges everything expired, batch after batch, until nothing is left or `signal` aborts. */
  async purge(signal?: AbortSignal): Promise<PurgeResult> {
    const result: PurgeResult = {
      status: 'nothing_expired',
      purged: noCounts(),
      checkpoints: [],
      broken_at: null,
    };
    let resume: Resume | null = null;
    while (signal?.aborted !== true) {
      const batch = await this.batch(resume);
      if (batch.kind !== 'purged') {
        if (result.checkpoints.length === 0) result.status = batch.kind;
        if (batch.kind === 'refused') result.broken_at = batch.broken_at;
        return result;
      }
      result.status = 'purged';
      result.checkpoints.push(batch.checkpointId);
      for (const f of EXPIRING_FAMILIES) result.purged[f] += batch.counts[f];
      if (!batch.more) break;
      resume = { checkpointId: batch.checkpointId, at: batch.at };
    }
    return result;
  }

  private batch(resume: Resume | null): Promise<Batch> {
    return this.db.transaction(async (tx): Promise<Batch> => {
      if (!(await retentionRepo.tryLock(tx))) return { kind: 'busy' };
      const cutoffs = cutoffsAt(this.now(), this.settings.days);
      if ((await this.expired(tx, cutoffs, NO_LIMIT, 1)).length === 0) {
        return { kind: 'nothing_expired' };
      }
      const walker = await this.walker(tx, resume);
      // Read while entries are still appended; then the few appended meanwhile, with the chain
      // locked so that the head signed is the head.
      await walkChain(tx, walker, VERIFY_BATCH);
      if (walker.broken_at === null) {
        await auditRepo.lockChain(tx);
        await walkChain(tx, walker, VERIFY_BATCH);
        walker.finish();
      }
      if (walker.broken_at !== null) return { kind: 'refused', broken_at: walker.broken_at };
      // Never the head itself: appends number the next entry from the newest one left.
      const rows = await this.expired(tx, cutoffs, walker.prev.seq - 1, this.settings.batch);
      if (rows.length === 0) return { kind: 'nothing_expired' };
      return this.remove(tx, rows, walker.prev, cutoffs);
    });
  }

  /**
   * Checks the whole chain, or, right after this run's own previous batch, only what follows its
   * checkpoint (nothing before it changed: only a purge may, and this one held the lock).
   */
  private async walker(tx: Db, resume: Resume | null): Promise<ChainWalker> {
    if (resume !== null) {
      const newest = await retentionRepo.newestCheckpoint(tx);
      if (newest?.id === resume.checkpointId) return new ChainWalker(this.signer, [], resume.at);
    }
    return new ChainWalker(this.signer, await retentionRepo.checkpoints(tx));
  }

  /** The expired entries up to `upToSeq`, at most `limit`, family by family, in seq order. */
  private async expired(
    tx: Db,
    cutoffs: Record<ExpiringFamily, Date>,
    upToSeq: number,
    limit: number,
  ): Promise<ExpiredEntry[]> {
    const rows: ExpiredEntry[] = [];
    for (const family of EXPIRING_FAMILIES) {
      if (rows.length >= limit) break;
      const left = limit - rows.length;
      rows.push(...(await retentionRepo.expired(tx, family, cutoffs[family], upToSeq, left)));
    }
    return rows.sort((a, b) => a.seq - b.seq);
  }

  private async remove(
    tx: Db,
    rows: ExpiredEntry[],
    head: ChainPoint,
    cutoffs: Record<ExpiringFamily, Date>,
  ): Promise<Batch> {
    const counts = noCounts();
    const digest = new TombstoneDigest();
    for (const row of rows) {
      counts[row.family] += 1;
      digest.add(row);
    }
    const fields: Omit<AuditCheckpointRow, 'signature'> = {
      id: randomUUID(),
      createdAt: this.now(),
      throughSeq: head.seq,
      throughHash: head.hash,
      purged: counts,
      cutoffs: {
        ehr: cutoffs.ehr.toISOString(),
        session: cutoffs.session.toISOString(),
        error: cutoffs.error.toISOString(),
      },
      tombstoneCount: digest.count,
      tombstonesDigest: digest.digest(),
      keyId: this.signer.keyId,
    };
    await retentionRepo.insertCheckpoint(tx, { ...fields, signature: this.signer.sign(fields) });
    const seqs = rows.map((r) => r.seq);
    await retentionRepo.copyTombstones(tx, seqs, fields.id);
    const deleted = await retentionRepo.deleteTombstoned(tx, seqs);
    if (deleted !== seqs.length) {
      throw new Error(`audit purge removed ${String(deleted)} of ${String(seqs.length)} entries`);
    }
    await this.audit.append(tx, purgedEvent(fields), SYSTEM_CONTEXT);
    const last = await auditRepo.last(tx);
    if (last === undefined) throw new Error('audit purge: the chain has no head');
    return {
      kind: 'purged',
      counts,
      checkpointId: fields.id,
      more: rows.length === this.settings.batch,
      at: last,
    };
  }
}

/** The purge's own entry: counts, cutoffs and the checkpoint, nothing about the entries removed. */
function purgedEvent(cp: Omit<AuditCheckpointRow, 'signature'>) {
  return {
    action: 'audit.purged',
    success: true,
    resourceType: 'audit_checkpoint',
    resourceId: cp.id,
    details: { purged: cp.purged, cutoffs: cp.cutoffs, through_seq: cp.throughSeq },
  };
}
