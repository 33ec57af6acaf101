import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import { auditRepo } from './repo.js';
import { GENESIS_HASH, entryHash } from './hash.js';

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

export interface ChainVerification {
  valid: boolean;
  checked: number;
  broken_at: { id: string; seq: number; reason: string } | null;
}

export class AuditService {
  constructor(
    private readonly db: Db,
    private readonly now: () => Date = () => new Date(),
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

  /** Walks the whole chain in order: sequence, links and every entry's hash. */
  async verify(batchSize = 1000): Promise<ChainVerification> {
    let prevHash = GENESIS_HASH;
    let prevSeq = 0;
    let checked = 0;
    for (;;) {
      const rows = await auditRepo.pageAfter(this.db, prevSeq, batchSize);
      for (const row of rows) {
        const reason =
          row.seq !== prevSeq + 1
            ? 'sequence gap'
            : row.prevHash !== prevHash
              ? 'previous hash does not match'
              : row.hash !== entryHash(row)
                ? 'entry hash does not match its content'
                : null;
        if (reason !== null) {
          return { valid: false, checked, broken_at: { id: row.id, seq: row.seq, reason } };
        }
        prevHash = row.hash;
        prevSeq = row.seq;
        checked += 1;
      }
      if (rows.length < batchSize) return { valid: true, checked, broken_at: null };
    }
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
