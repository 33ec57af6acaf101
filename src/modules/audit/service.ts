import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Db } from '../../db/client.js';
import type { AuditRow } from '../../db/schema/index.js';
import { ChainWalker, walkChain, type BrokenAt } from './chain.js';
import type { CheckpointSigner } from './checkpoint.js';
import { auditCsv } from './export.js';
import { auditRepo } from './repo.js';
import { GENESIS_HASH, entryHash } from './hash.js';
import { retentionRepo } from './retention-repo.js';
import type { AuditFilter } from './schema.js';

/**
 * Entries read per query while verifying: large enough that 100,000 entries are a few round
 * trips, small enough that one page is a few megabytes.
 */
export const VERIFY_BATCH = 5000;

/** Who asked, from where: carried from the HTTP request (or the CLI) into audit entries. */
export interface RequestContext {
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}

export const SYSTEM_CONTEXT: RequestContext = { ip: null, userAgent: null, requestId: null };

export interface AuditEvent {
  action: string;
  success: boolean;
  actorId?: string | null;
  actorEmail?: string | null;
  resourceType?: string | null;
  resourceId?: string | null;
  /** Identifiers and outcomes only: never message content, passwords or patient data. */
  details?: Record<string, unknown>;
}

/** The chain check's answer; the last three fields came with retention (issue 13). */
export interface ChainVerification {
  valid: boolean;
  /** Entries found intact before any break. */
  checked: number;
  broken_at: BrokenAt | null;
  /** Purged entries whose place in the chain was followed through their tombstones. */
  tombstones: number;
  /** Signed checkpoints the check relied on. */
  checkpoints: number;
  latest_checkpoint: CheckpointSummary | null;
}

export interface CheckpointSummary {
  id: string;
  created_at: string;
  through_seq: number;
  purged: Record<string, number>;
}

export class AuditService {
  constructor(
    private readonly db: Db,
    private readonly now: () => Date = () => new Date(),
    /**
     * Checks the retention purge's checkpoints (checkpoint.ts). Without it (benchmarks, tools
     * that never purge) a chain with checkpoints does not verify.
     */
    private readonly signer: CheckpointSigner | null = null,
  ) {}

  /** Appends inside the caller's transaction, so the entry commits or rolls back with the action. */
  async append(tx: Db, event: AuditEvent, ctx: RequestContext): Promise<void> {
    await auditRepo.lockChain(tx);
    const last = await auditRepo.last(tx);
    const fields = {
      id: randomUUID(),
      seq: (last?.seq ?? 0) + 1,
      timestamp: this.now(),
      action: event.action,
      actorId: event.actorId ?? null,
      actorEmail: event.actorEmail ?? null,
      resourceType: event.resourceType ?? null,
      resourceId: event.resourceId ?? null,
      success: event.success,
      ip: ctx.ip,
      userAgent: ctx.userAgent?.slice(0, 512) ?? null,
      requestId: ctx.requestId,
      details: event.details ?? {},
      prevHash: last?.hash ?? GENESIS_HASH,
    };
    await auditRepo.insert(tx, { ...fields, hash: entryHash(fields) });
  }

  /** Appends in a transaction of its own, for events that accompany no other write. */
  async record(event: AuditEvent, ctx: RequestContext): Promise<void> {
    await this.db.transaction((tx) => this.append(tx, event, ctx));
  }

  /**
   * Walks the whole chain in order: sequence, links and every entry's hash, the tombstones of
   * purged entries, and each signed checkpoint at its head. One read-only snapshot, so a purge
   * committing meanwhile cannot look like a gap.
   */
  async verify(batchSize = VERIFY_BATCH): Promise<ChainVerification> {
    return this.db.transaction(
      async (tx) => {
        const checkpoints = await retentionRepo.checkpoints(tx);
        const walker = new ChainWalker(this.signer, checkpoints);
        await walkChain(tx, walker, batchSize);
        walker.finish();
        const latest = checkpoints.at(-1);
        return {
          valid: walker.broken_at === null,
          checked: walker.checked,
          broken_at: walker.broken_at,
          tombstones: walker.tombstones,
          checkpoints: checkpoints.length,
          latest_checkpoint:
            latest === undefined
              ? null
              : {
                  id: latest.id,
                  created_at: latest.createdAt.toISOString(),
                  through_seq: latest.throughSeq,
                  purged: latest.purged,
                },
        };
      },
      { isolationLevel: 'repeatable read', accessMode: 'read only' },
    );
  }

  /** A page of the entries the filter matches, newest first, and how many match in all. */
  async page(
    filter: AuditFilter,
    page: number,
    limit: number,
  ): Promise<{ rows: AuditRow[]; total: number }> {
    const [rows, total] = await Promise.all([
      auditRepo.list(this.db, filter, (page - 1) * limit, limit),
      auditRepo.count(this.db, filter),
    ]);
    return { rows, total };
  }

  /**
   * The export is itself audited (`audit.exported`, with the filters as given) before anything is
   * read; the file then holds the matching entries up to and including that record, oldest first,
   * so entries appended while it streams are not in it.
   */
  async exportCsv(
    filter: AuditFilter,
    filters: Record<string, string>,
    actor: { id: string; email: string },
    ctx: RequestContext,
  ): Promise<{ filename: string; stream: Readable }> {
    const event: AuditEvent = {
      action: 'audit.exported',
      success: true,
      actorId: actor.id,
      actorEmail: actor.email,
      resourceType: 'audit_log',
      details: { format: 'csv', filters },
    };
    const upTo = await this.db.transaction(async (tx) => {
      await this.append(tx, event, ctx);
      return (await auditRepo.last(tx))?.seq ?? 0;
    });
    const date = this.now().toISOString().slice(0, 10);
    return { filename: `audit-log-${date}.csv`, stream: await auditCsv(this.db, filter, upTo) };
  }
}

/** An event by `actor` about the user account `userId`. */
export function userEvent(
  action: string,
  actor: { id: string | null; email: string | null },
  userId: string | null,
  extra: { success?: boolean; details?: Record<string, unknown> | undefined } = {},
): AuditEvent {
  return {
    action,
    success: extra.success ?? true,
    actorId: actor.id,
    actorEmail: actor.email,
    resourceType: 'user',
    resourceId: userId,
    ...(extra.details === undefined ? {} : { details: extra.details }),
  };
}
