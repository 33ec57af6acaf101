import type { Readable } from 'node:stream';
import type { Db } from '../../db/client.js';
import type { AuditRow } from '../../db/schema/index.js';
import { pagedCsv, type CsvCell } from '../../platform/csv.js';
import { auditRepo } from './repo.js';
import type { AuditFilter } from './schema.js';

/** The columns of the file: the fields of an entry as the list answers them (DECISIONS 7). */
export const AUDIT_EXPORT_COLUMNS = [
  'id',
  'seq',
  'timestamp',
  'action',
  'actor_id',
  'actor_email',
  'resource_type',
  'resource_id',
  'success',
  'ip',
  'user_agent',
  'request_id',
  'details',
  'prev_hash',
  'hash',
] as const;

/** Rows per keyset page: one short query each, and at most one page held at a time. */
export const AUDIT_EXPORT_PAGE_ROWS = 1000;

/** `details` as its JSON text; every text cell is neutralised by csvRow where it needs it. */
const cells = (r: AuditRow): CsvCell[] => [
  r.id,
  r.seq,
  r.timestamp.toISOString(),
  r.action,
  r.actorId,
  r.actorEmail,
  r.resourceType,
  r.resourceId,
  String(r.success),
  r.ip,
  r.userAgent,
  r.requestId,
  JSON.stringify(r.details),
  r.prevHash,
  r.hash,
];

/**
 * The filtered entries with seq up to `upTo` as a CSV stream, oldest first (chain order), read in
 * keyset pages on seq as the client takes them.
 */
export function auditCsv(
  db: Db,
  filter: AuditFilter,
  upTo: number,
  pageRows = AUDIT_EXPORT_PAGE_ROWS,
): Promise<Readable> {
  return pagedCsv(
    AUDIT_EXPORT_COLUMNS,
    (after) => auditRepo.exportPage(db, filter, { afterSeq: after?.seq ?? 0, upTo }, pageRows),
    cells,
    pageRows,
  );
}
