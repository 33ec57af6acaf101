import type { Readable } from 'node:stream';
import type { Db } from '../../db/client.js';
import type { FeedbackRow } from '../../db/schema/index.js';
import { pagedCsv } from '../../platform/csv.js';
import { feedbackRepo, type FeedbackWindow } from './repo.js';

export const EXPORT_COLUMNS = [
  'id',
  'created_at',
  'user_id',
  'session_id',
  'rating',
  'category',
  'comments',
] as const;

/** Rows per keyset page: each page is one short query, and at most one page is held at a time. */
export const EXPORT_PAGE_ROWS = 500;

const cells = (r: FeedbackRow) => [
  r.id,
  r.createdAt.toISOString(),
  r.userId,
  r.sessionId,
  r.rating,
  r.category,
  r.comments,
];

/**
 * The export as a stream of CSV text: the header row, then the window's rows oldest first, read
 * page by page (keyset on created_at, id) as the client takes them, so memory stays at one page
 * whatever the number of rows (see pagedCsv).
 */
export async function feedbackCsv(
  db: Db,
  window: FeedbackWindow,
  pageRows = EXPORT_PAGE_ROWS,
): Promise<Readable> {
  return pagedCsv(
    EXPORT_COLUMNS,
    (after) => feedbackRepo.exportPage(db, window, after, pageRows),
    cells,
    pageRows,
  );
}
