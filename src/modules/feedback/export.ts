import { Readable } from 'node:stream';
import type { Db } from '../../db/client.js';
import type { FeedbackRow } from '../../db/schema/index.js';
import { csvRow } from '../../platform/csv.js';
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

const toCsv = (r: FeedbackRow): string =>
  csvRow([
    r.id,
    r.createdAt.toISOString(),
    r.userId,
    r.sessionId,
    r.rating,
    r.category,
    r.comments,
  ]);

/**
 * The export as a stream of CSV text: the header row, then the window's rows oldest first, read
 * page by page (keyset on created_at, id) as the client takes them, so memory stays at one page
 * whatever the number of rows. The first page is read before anything is sent, so a database that
 * is down is an error answer rather than a cut-off file.
 */
export async function feedbackCsv(
  db: Db,
  window: FeedbackWindow,
  pageRows = EXPORT_PAGE_ROWS,
): Promise<Readable> {
  const first = await feedbackRepo.exportPage(db, window, null, pageRows);
  async function* chunks(): AsyncGenerator<string> {
    yield csvRow(EXPORT_COLUMNS);
    let page = first;
    while (page.length > 0) {
      yield page.map(toCsv).join('');
      const last = page.at(-1);
      if (page.length < pageRows || last === undefined) return;
      page = await feedbackRepo.exportPage(db, window, last, pageRows);
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}
