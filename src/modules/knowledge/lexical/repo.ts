import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../../db/client.js';

/** The changes a lexical index has not applied are kept this long (in changes) at most. */
export const KEPT_CHANGES = 10_000;

/** A live chunk as the index loads it: its terms, or its search text when none were stored. */
export interface LexicalRow {
  id: string;
  documentId: string;
  jobId: string;
  category: string;
  terms: string | null;
  searchText: string | null;
}

export interface SearchChange {
  seq: number;
  documentId: string;
  keepJobId: string | null;
  addJobId: string | null;
}

const columns = sql`c.id, c.document_id as "documentId", c.job_id as "jobId", c.category,
  c.terms, case when c.terms is null then c.search_text end as "searchText"`;

export const lexicalRepo = {
  /**
   * Records, in the caller's transaction, that the document's chunks other than `keepJobId`'s
   * left the searchable set and that `addJobId`'s entered it. The counter row's lock orders
   * writers, so changes are numbered in commit order without gaps.
   */
  async recordChange(
    tx: Db,
    change: { documentId: string; keepJobId?: string | null; addJobId?: string | null },
  ): Promise<void> {
    await tx.execute(sql`with s as (
        insert into kb_search_state (id, seq) values (1, 1)
        on conflict (id) do update set seq = kb_search_state.seq + 1
        returning seq
      ), added as (
        insert into kb_search_changes (seq, document_id, keep_job_id, add_job_id)
        select s.seq, ${change.documentId}::uuid, ${change.keepJobId ?? null}::uuid,
               ${change.addJobId ?? null}::uuid from s
        returning seq
      )
      delete from kb_search_changes where seq <= (select seq from added) - ${KEPT_CHANGES}`);
  },

  /** The last change's number, and the first one still kept (null when none is). */
  async state(db: Db): Promise<{ seq: number; oldest: number | null }> {
    const [row] = await queryRows<{ seq: string | number | null; oldest: string | number | null }>(
      db,
      sql`select (select seq from kb_search_state where id = 1) as seq,
                 (select min(seq) from kb_search_changes) as oldest`,
    );
    return {
      seq: Number(row?.seq ?? 0),
      oldest: row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest),
    };
  },

  async changes(db: Db, afterSeq: number, upToSeq: number, limit: number): Promise<SearchChange[]> {
    const rows = await queryRows<Omit<SearchChange, 'seq'> & { seq: string | number }>(
      db,
      sql`select seq, document_id as "documentId", keep_job_id as "keepJobId",
                 add_job_id as "addJobId"
            from kb_search_changes where seq > ${afterSeq} and seq <= ${upToSeq}
           order by seq limit ${limit}`,
    );
    return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
  },

  /** A page of the live chunks, by id: every one, or those `jobId` wrote. */
  livePage(
    db: Db,
    jobId: string | null,
    afterId: string | null,
    limit: number,
  ): Promise<LexicalRow[]> {
    return queryRows<LexicalRow>(
      db,
      sql`select ${columns} from kb_chunks c
           where c.active and not c.superseded
             ${jobId === null ? sql`` : sql`and c.job_id = ${jobId}::uuid`}
             ${afterId === null ? sql`` : sql`and c.id > ${afterId}::uuid`}
           order by c.id limit ${limit}`,
    );
  },
};
