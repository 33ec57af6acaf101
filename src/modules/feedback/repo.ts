import { and, asc, gte, lte, sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.js';
import { feedback, type FeedbackRow } from '../../db/schema/index.js';

/** Rows created from `since` up to and including `until`. */
export interface FeedbackWindow {
  since: Date;
  until: Date;
}

/** Where an export page starts: after this row in (created_at, id) order. */
export interface ExportCursor {
  createdAt: Date;
  id: string;
}

export interface SummaryRow {
  count: number;
  average_rating: number | null;
  r1: number;
  r2: number;
  r3: number;
  r4: number;
  r5: number;
  by_category: Record<string, number>;
}

const ratingCount = (r: number) => sql.raw(`count(*) filter (where rating = ${String(r)})::int`);

export const feedbackRepo = {
  async insert(
    db: Db,
    row: Pick<FeedbackRow, 'id' | 'userId' | 'sessionId' | 'rating' | 'category' | 'comments'> & {
      createdAt: Date;
    },
  ): Promise<FeedbackRow> {
    const [created] = await db.insert(feedback).values(row).returning();
    if (created === undefined) throw new Error('insert returned no row');
    return created;
  },

  /**
   * Count, mean, per rating and per category, all in one statement (one snapshot, one round trip);
   * the window's rows are found through the created_at index.
   */
  async summary(db: Db, since: Date): Promise<SummaryRow> {
    const from = sql`${since.toISOString()}::timestamptz`;
    const [row] = await queryRows<SummaryRow>(
      db,
      sql`select count(*)::int as count,
          round(avg(rating), 2)::float8 as average_rating,
          ${ratingCount(1)} as r1, ${ratingCount(2)} as r2, ${ratingCount(3)} as r3,
          ${ratingCount(4)} as r4, ${ratingCount(5)} as r5,
          coalesce((select jsonb_object_agg(category, n) from (
              select category, count(*)::int as n from feedback
              where created_at >= ${from} group by category) as c), '{}'::jsonb) as by_category
        from feedback where created_at >= ${from}`,
    );
    if (row === undefined) throw new Error('aggregate returned no row');
    return row;
  },

  /** One page of the export, oldest first, after `cursor` (keyset: no offset to skip over). */
  async exportPage(
    db: Db,
    window: FeedbackWindow,
    cursor: ExportCursor | null,
    limit: number,
  ): Promise<FeedbackRow[]> {
    // A row comparison, which PostgreSQL answers from the (created_at, id) index directly.
    const after =
      cursor === null
        ? undefined
        : sql`(${feedback.createdAt}, ${feedback.id}) > (${cursor.createdAt.toISOString()}::timestamptz, ${cursor.id}::uuid)`;
    return db
      .select()
      .from(feedback)
      .where(
        and(gte(feedback.createdAt, window.since), lte(feedback.createdAt, window.until), after),
      )
      .orderBy(asc(feedback.createdAt), asc(feedback.id))
      .limit(limit);
  },
};
