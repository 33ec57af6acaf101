import { and, desc, eq, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.js';
import {
  branches,
  conversationCounts,
  conversations,
  type ConversationRow,
} from '../../db/schema/index.js';

export interface ConversationFilter {
  archived?: boolean | undefined;
  folderId?: string | undefined;
}

export type ConversationPatch = Partial<Pick<ConversationRow, 'title' | 'archived' | 'folderId'>>;

/** Conversations of one owner; every query is scoped by `user_id`, so others' rows never match. */
export const conversationsRepo = {
  /** The conversation and its `main` branch. Call inside a transaction. */
  async insert(
    tx: Db,
    row: Pick<ConversationRow, 'id' | 'userId' | 'title' | 'folderId'>,
  ): Promise<ConversationRow> {
    const [created] = await tx.insert(conversations).values(row).returning();
    if (created === undefined) throw new Error('insert returned no row');
    await tx.insert(branches).values({ conversationId: row.id, id: 'main' });
    return created;
  },

  async find(db: Db, userId: string, id: string): Promise<ConversationRow | undefined> {
    const [row] = await db
      .select()
      .from(conversations)
      .where(and(eq(conversations.id, id), eq(conversations.userId, userId)))
      .limit(1);
    return row;
  },

  /**
   * One page, newest activity first, and the total matching the filter, in one round trip: the
   * total comes from `conversation_counts`, so it costs the same for 10 or 10,000 conversations.
   */
  async page(
    db: Db,
    userId: string,
    filter: ConversationFilter,
    offset: number,
    limit: number,
  ): Promise<{ rows: ConversationRow[]; total: number }> {
    const params = { userId, ...filter, offset, limit };
    const rows = await pageQuery(db, filter).execute(params);
    const first = rows[0];
    if (first !== undefined) return { rows: rows.map((r) => r.row), total: first.total };
    // Past the last page (or nothing at all): the total still has to be told.
    const [only] = await queryRows<{ total: number }>(
      db,
      sql`select (${totalOf(db, userId, filter)}) as total`,
    );
    return { rows: [], total: only?.total ?? 0 };
  },

  async update(
    db: Db,
    userId: string,
    id: string,
    patch: ConversationPatch,
  ): Promise<ConversationRow | undefined> {
    const [row] = await db
      .update(conversations)
      .set({ ...patch, updatedAt: sql`clock_timestamp()` })
      .where(and(eq(conversations.id, id), eq(conversations.userId, userId)))
      .returning();
    return row;
  },

  /** Deletes the conversation with its branches and messages (foreign keys cascade). */
  async delete(db: Db, userId: string, id: string): Promise<boolean> {
    const rows = await db
      .delete(conversations)
      .where(and(eq(conversations.id, id), eq(conversations.userId, userId)))
      .returning({ id: conversations.id });
    return rows.length > 0;
  },
};

interface FilterValues {
  archived?: boolean | Placeholder | undefined;
  folderId?: string | Placeholder | undefined;
}

/** The filter's conditions on `conversations`, or on `conversation_counts` for the total. */
function conditions(filter: FilterValues, on: 'conversations' | 'counts'): SQL[] {
  const archived = on === 'counts' ? conversationCounts.archived : conversations.archived;
  const folder = on === 'counts' ? conversationCounts.folderKey : conversations.folderId;
  return [
    ...(filter.archived === undefined ? [] : [eq(archived, filter.archived)]),
    ...(filter.folderId === undefined ? [] : [eq(folder, filter.folderId)]),
  ];
}

function totalOf(db: Db, userId: string | Placeholder, filter: FilterValues) {
  return db
    .select({ n: sql<number>`coalesce(sum(${conversationCounts.n}), 0)::int` })
    .from(conversationCounts)
    .where(and(eq(conversationCounts.userId, userId), ...conditions(filter, 'counts')));
}

/** A page with its total; the user, the filter's values, offset and limit are placeholders. */
function pageSelect(db: Db, filter: FilterValues) {
  const userId = sql.placeholder('userId');
  const total = totalOf(db, userId, filter);
  return db
    .select({ row: conversations, total: sql<number>`(${total})`.mapWith(Number) })
    .from(conversations)
    .where(and(eq(conversations.userId, userId), ...conditions(filter, 'conversations')))
    .orderBy(desc(conversations.updatedAt), desc(conversations.id))
    .offset(sql.placeholder('offset'))
    .limit(sql.placeholder('limit'));
}

type PageQuery = ReturnType<ReturnType<typeof pageSelect>['prepare']>;
const pageQueries = new WeakMap<Db, Map<string, PageQuery>>();

/**
 * The page statement for the filter's shape (which of `archived` and `folderId` it sets), built
 * and prepared once per database handle: a list is then one round trip of a statement the
 * connection has already parsed, with no query building in between.
 */
function pageQuery(db: Db, filter: ConversationFilter): PageQuery {
  const archived = filter.archived !== undefined;
  const folder = filter.folderId !== undefined;
  const name = `conversations_page${archived ? '_archived' : ''}${folder ? '_folder' : ''}`;
  let byName = pageQueries.get(db);
  if (byName === undefined) {
    byName = new Map();
    pageQueries.set(db, byName);
  }
  let query = byName.get(name);
  if (query === undefined) {
    query = pageSelect(db, {
      archived: archived ? sql.placeholder('archived') : undefined,
      folderId: folder ? sql.placeholder('folderId') : undefined,
    }).prepare(name);
    byName.set(name, query);
  }
  return query;
}
