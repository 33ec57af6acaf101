import { sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client.js';
import type { StoredMessage } from './schema.js';

/** The thread of a branch, read in one prepared statement (used by `messagesRepo.thread`). */

export interface ThreadPage {
  found: boolean;
  beforeFound: boolean;
  total: number;
  /** Newest first. */
  rows: StoredMessage[];
}

export type RawMessage = Omit<StoredMessage, 'createdAt'> & { createdAtMs: number };
/** A thread row: the page's columns are null when the page is empty. */
export type RawThreadRow = { found: boolean; beforeFound: boolean; total: number } & (
  RawMessage | { id: null }
);

/** Message columns as raw statements select them (see `queryRows`). */
export const MESSAGE_COLUMNS = sql.raw(`m.id, m.conversation_id as "conversationId",
  m.branch_id as "branchId", m.seq, m.parent_message_id as "parentMessageId", m.role, m.content,
  m.citations, m.tool_calls as "toolCalls", m.client_message_id as "clientMessageId",
  m.interrupted, m.usage, (extract(epoch from m.created_at) * 1000)::float8 as "createdAtMs"`);

export const toStored = (row: RawMessage): StoredMessage => ({
  id: row.id,
  conversationId: row.conversationId,
  branchId: row.branchId,
  seq: row.seq,
  parentMessageId: row.parentMessageId,
  role: row.role,
  content: row.content,
  citations: row.citations,
  toolCalls: row.toolCalls,
  clientMessageId: row.clientMessageId,
  interrupted: row.interrupted,
  usage: row.usage,
  createdAt: new Date(row.createdAtMs),
});

/** The largest `seq`, for "no upper bound". */
const NO_BOUND = 2_147_483_647;

/**
 * The thread statement. The thread of a branch is its ancestors' messages up to each fork point,
 * then its own: `chain` walks up the branches (one row per level of nesting, newest level
 * first), each with the `seq` up to which that level belongs to the thread. Every message of a
 * deeper level was appended after its fork, so the levels hold disjoint ranges of `seq`, the
 * deeper the newer. `levels` counts each level's messages on the thread, and those older than
 * `before`, from the (conversation, branch, seq) index alone; `plan` gives each level its share
 * of the page, newest level first; the page then reads exactly its rows through the same index,
 * backwards. Nothing but the page's rows is read from the table, however long the thread.
 */
function threadStatement(): SQL {
  const conversationId = () => sql`${sql.placeholder('conversationId')}::uuid`;
  const before = () => sql`${sql.placeholder('before')}::uuid`;
  return sql`with recursive chain (branch_id, upto, depth) as (
      select b.id, null::int, 0
        from branches b join conversations c on c.id = b.conversation_id
       where c.id = ${conversationId()} and c.user_id = ${sql.placeholder('userId')}::uuid
         and b.id = ${sql.placeholder('branchId')}::text
      union all
      select p.parent_branch_id, p.parent_seq, chain.depth + 1
        from chain join branches p
          on p.conversation_id = ${conversationId()} and p.id = chain.branch_id
       where p.parent_branch_id is not null
    ), bound as (
      select (select m.seq from chain join messages m
                on m.id = ${before()} and m.conversation_id = ${conversationId()}
               and m.branch_id = chain.branch_id and m.seq <= coalesce(chain.upto, ${NO_BOUND}))
        as seq
    ), levels as (
      select chain.branch_id, chain.depth, coalesce(chain.upto, ${NO_BOUND}) as upto, n.total,
             n.older
        from chain, bound, lateral (
          select count(*)::int as total,
                 (count(*) filter (where m.seq < coalesce(bound.seq, ${NO_BOUND})))::int as older
            from messages m
           where m.conversation_id = ${conversationId()} and m.branch_id = chain.branch_id
             and m.seq <= coalesce(chain.upto, ${NO_BOUND})
        ) n
    ), plan as (
      select branch_id, upto,
             greatest(0, least(older, ${sql.placeholder('limit')}::int - coalesce(sum(older)
               over (order by depth rows between unbounded preceding and 1 preceding), 0))) as take
        from levels
    ), head as (
      select exists (select 1 from chain) as found,
             (${before()} is null or bound.seq is not null) as before_found,
             (select coalesce(sum(total), 0) from levels)::int as total,
             coalesce(bound.seq, ${NO_BOUND}) as below
        from bound
    )
    select head.found, head.before_found as "beforeFound", head.total, page.*
      from head left join lateral (
        select ${MESSAGE_COLUMNS} from plan cross join lateral (
          select * from messages m
           where m.conversation_id = ${conversationId()} and m.branch_id = plan.branch_id
             and m.seq <= plan.upto and m.seq < head.below
           order by m.seq desc
           limit plan.take
        ) m
      ) page on head.before_found`;
}

type Prepared<T> = (params: Record<string, unknown>) => Promise<T[]>;
const threadQueries = new WeakMap<Db, Prepared<RawThreadRow>>();

/**
 * The thread statement, prepared once per database handle under one name: PostgreSQL parses it
 * once per connection and, after a few runs, keeps a generic plan, so a read is one round trip
 * with no planning. Its rows come back as the driver reads them, with no mapping per column.
 */
export function threadQuery(db: Db): Prepared<RawThreadRow> {
  let query = threadQueries.get(db);
  if (query === undefined) {
    const prepared = db._.session.prepareQuery<{
      execute: { rows: RawThreadRow[] };
      all: unknown;
      values: unknown;
    }>(new PgDialect().sqlToQuery(threadStatement()), undefined, 'messages_thread', false);
    query = async (params) => (await prepared.execute(params)).rows;
    threadQueries.set(db, query);
  }
  return query;
}
