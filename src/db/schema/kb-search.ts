import { sql } from 'drizzle-orm';
import { bigint, check, pgTable, smallint, uuid } from 'drizzle-orm/pg-core';

/**
 * The changes to the set of searchable chunks, in commit order, so that every instance's lexical
 * index (see LexicalIndex) can follow them: a document's chunks removed, except those of
 * `keep_job_id`, then the chunks of `add_job_id` added. The last 10,000 are kept; an instance that
 * fell further behind builds its index again from kb_chunks.
 */
export const kbSearchChanges = pgTable('kb_search_changes', {
  /** kb_search_state.seq of the transaction that made the change. */
  seq: bigint('seq', { mode: 'number' }).primaryKey(),
  documentId: uuid('document_id').notNull(),
  keepJobId: uuid('keep_job_id'),
  addJobId: uuid('add_job_id'),
});

/**
 * The one counter row (id 1) of kb_search_changes. A writer updates it in its transaction, which
 * serialises writers: changes are numbered without gaps, in commit order.
 */
export const kbSearchState = pgTable(
  'kb_search_state',
  {
    id: smallint('id').primaryKey(),
    seq: bigint('seq', { mode: 'number' }).notNull().default(0),
  },
  (t) => [check('kb_search_state_single_row', sql`${t.id} = 1`)],
);
