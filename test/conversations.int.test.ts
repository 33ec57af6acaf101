import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, branches, conversationCounts, messages } from '../src/db/schema/index.js';
import type {
  BranchDto,
  ConversationDto,
  MessageDto,
} from '../src/modules/conversations/schema.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, errorOf, type TestUser } from './helpers/factories.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

interface Page {
  items: ConversationDto[];
  total: number;
  page: number;
  pageSize: number;
}

interface Thread {
  items: MessageDto[];
  total: number;
  branchId: string;
  limit: number;
}

describe.each(['postgres', 'pglite'] as const)('conversations (%s)', (backend) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  beforeAll(async () => {
    t = await createTestApp({ backend });
    [alice, bob] = [await createUser(t.app, t.deps), await createUser(t.app, t.deps)];
  });
  afterAll(() => t.close());

  const call = (user: TestUser, method: Method, url: string, payload?: object) =>
    t.app.inject({
      method,
      url,
      headers: bearer(user.access),
      ...(payload === undefined ? {} : { payload }),
    });

  async function create(user: TestUser, body: object = { title: 'Chest pain work-up' }) {
    const res = await call(user, 'POST', '/conversations', body);
    expect(res.statusCode, res.body).toBe(201);
    return dataOf<ConversationDto>(res);
  }

  const list = async (user: TestUser, query = '') =>
    dataOf<Page>(await call(user, 'GET', `/conversations${query}`));

  /** Appends `n` alternating user/assistant messages; returns their ids in order. */
  async function say(user: TestUser, conversationId: string, n: number, branchId = 'main') {
    const ids: string[] = [];
    for (let i = 0; i < n; i += 1) {
      const role = i % 2 === 0 ? 'user' : 'assistant';
      const content = `${branchId.slice(0, 4)} ${String(i)}`;
      const { message } = await t.deps.messages.append(user.id, conversationId, {
        branchId,
        role,
        content,
      });
      ids.push(message.id);
    }
    return ids;
  }

  async function fork(user: TestUser, conversationId: string, body: object) {
    const res = await call(user, 'POST', `/conversations/${conversationId}/branches`, body);
    expect(res.statusCode, res.body).toBe(201);
    return dataOf<BranchDto>(res);
  }

  const thread = async (user: TestUser, conversationId: string, query = '') =>
    dataOf<Thread>(await call(user, 'GET', `/conversations/${conversationId}/messages${query}`));

  describe('a conversation', () => {
    it('is created with its main branch and read back as the spec shapes it', async () => {
      const c = await create(alice, { title: 'Dyspnoea', folder_id: 'cardio' });
      expect(c).toEqual({
        id: expect.any(String),
        userId: alice.id,
        title: 'Dyspnoea',
        archived: false,
        messageCount: 0,
        folderId: 'cardio',
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updatedAt: c.createdAt,
      });
      expect(dataOf(await call(alice, 'GET', `/conversations/${c.id}`))).toEqual(c);
      const { items } = dataOf<{ items: BranchDto[] }>(
        await call(alice, 'GET', `/conversations/${c.id}/branches`),
      );
      expect(items).toEqual([
        {
          id: 'main',
          conversationId: c.id,
          parentMessageId: null,
          createdAt: c.createdAt,
          messageCount: 0,
          lastMessageAt: null,
        },
      ]);
      expect(await thread(alice, c.id)).toEqual({
        items: [],
        total: 0,
        branchId: 'main',
        limit: 50,
      });
      expect((await create(alice)).folderId).toBeNull();
    });

    it('is updated field by field; null removes the folder; updatedAt moves on', async () => {
      const c = await create(alice, { title: 'Before', folder_id: 'inbox' });
      const renamed = dataOf<ConversationDto>(
        await call(alice, 'PUT', `/conversations/${c.id}`, { title: 'After' }),
      );
      expect(renamed).toMatchObject({ title: 'After', archived: false, folderId: 'inbox' });
      expect(Date.parse(renamed.updatedAt)).toBeGreaterThanOrEqual(Date.parse(c.updatedAt));
      const moved = dataOf<ConversationDto>(
        await call(alice, 'PUT', `/conversations/${c.id}`, { archived: true, folder_id: null }),
      );
      expect(moved).toMatchObject({ title: 'After', archived: true, folderId: null });
      expect(moved.createdAt).toBe(c.createdAt);
    });

    it("is another user's only: every route answers 404 to anyone else and changes nothing", async () => {
      const c = await create(alice, { title: 'Private' });
      const [m] = await say(alice, c.id, 1);
      const attempts: [Method, string, object?][] = [
        ['GET', `/conversations/${c.id}`],
        ['PUT', `/conversations/${c.id}`, { title: 'Taken over' }],
        ['DELETE', `/conversations/${c.id}`],
        ['GET', `/conversations/${c.id}/branches`],
        ['POST', `/conversations/${c.id}/branches`, { parent_message_id: m }],
        ['GET', `/conversations/${c.id}/messages`],
      ];
      for (const [method, url, body] of attempts) {
        const err = errorOf(await call(bob, method, url, body), 404);
        expect(err).toEqual({
          code: 'NOT_FOUND',
          message: 'Conversation not found',
          details: null,
        });
      }
      await expect(
        t.deps.messages.append(bob.id, c.id, { role: 'user', content: 'x' }),
      ).rejects.toThrow('Conversation not found');
      expect(dataOf<ConversationDto>(await call(alice, 'GET', `/conversations/${c.id}`))).toEqual({
        ...c,
        messageCount: 1,
        updatedAt: expect.any(String),
      });
      expect((await list(bob)).items.map((i) => i.id)).not.toContain(c.id);
      expect((await thread(alice, c.id)).total).toBe(1);
    });

    it('is deleted with its branches and messages, and audited without its content', async () => {
      const c = await create(alice, { title: 'To delete' });
      const ids = await say(alice, c.id, 4);
      await fork(alice, c.id, { parent_message_id: ids[1], initial_message: 'What if' });
      const res = await call(alice, 'DELETE', `/conversations/${c.id}`);
      expect(dataOf(res)).toEqual({ message: 'Conversation deleted' });
      errorOf(await call(alice, 'GET', `/conversations/${c.id}`), 404);
      errorOf(await call(alice, 'DELETE', `/conversations/${c.id}`), 404);
      const db = t.deps.database.db;
      expect(await db.select().from(messages).where(eq(messages.conversationId, c.id))).toEqual([]);
      expect(await db.select().from(branches).where(eq(branches.conversationId, c.id))).toEqual([]);
      const [entry] = await db.select().from(auditLogs).where(eq(auditLogs.resourceId, c.id));
      expect(entry).toMatchObject({
        action: 'conversation.deleted',
        actorId: alice.id,
        resourceType: 'conversation',
        details: {},
      });
      expect(JSON.stringify(entry)).not.toContain('To delete');
    });

    it("goes with its owner's account, counts included", async () => {
      const carol = await createUser(t.app, t.deps);
      const c = await create(carol);
      await say(carol, c.id, 2);
      dataOf(await call(carol, 'DELETE', '/api/users/me'));
      const db = t.deps.database.db;
      expect(await db.select().from(messages).where(eq(messages.conversationId, c.id))).toEqual([]);
      const counts = await db
        .select()
        .from(conversationCounts)
        .where(eq(conversationCounts.userId, carol.id));
      expect(counts).toEqual([]);
    });
  });

  describe('the list', () => {
    let dora: TestUser;
    const created: ConversationDto[] = [];
    beforeAll(async () => {
      dora = await createUser(t.app, t.deps);
      for (let i = 0; i < 7; i += 1) {
        const folder = i % 3 === 0 ? { folder_id: 'renal' } : {};
        created.push(await create(dora, { title: `Case ${String(i)}`, ...folder }));
      }
      // Archive cases 1 and 4; case 2 then gets a message, which makes it the most recent.
      for (const i of [1, 4]) {
        const id = created[i]?.id ?? '';
        dataOf(await call(dora, 'PUT', `/conversations/${id}`, { archived: true }));
      }
      await say(dora, created[2]?.id ?? '', 1);
    });

    const titles = (page: Page) => page.items.map((c) => c.title);

    it('is newest activity first, paged, with the total', async () => {
      const all = await list(dora);
      expect(all).toMatchObject({ total: 7, page: 1, pageSize: 20 });
      expect(titles(all)).toEqual([
        'Case 2',
        'Case 4',
        'Case 1',
        'Case 6',
        'Case 5',
        'Case 3',
        'Case 0',
      ]);
      expect(all.items[0]?.messageCount).toBe(1);
      const second = await list(dora, '?page=2&pageSize=3');
      expect(second).toMatchObject({ total: 7, page: 2, pageSize: 3 });
      expect(titles(second)).toEqual(['Case 6', 'Case 5', 'Case 3']);
      expect(titles(await list(dora, '?page=3&pageSize=3'))).toEqual(['Case 0']);
      expect(await list(dora, '?page=9&pageSize=3')).toEqual({
        items: [],
        total: 7,
        page: 9,
        pageSize: 3,
      });
    });

    it('filters by archived and folder, each total counting only what matches', async () => {
      const archived = await list(dora, '?archived=true');
      expect([titles(archived), archived.total]).toEqual([['Case 4', 'Case 1'], 2]);
      const active = await list(dora, '?archived=false&pageSize=2');
      expect([titles(active), active.total]).toEqual([['Case 2', 'Case 6'], 5]);
      const renal = await list(dora, '?folderId=renal');
      expect([titles(renal), renal.total]).toEqual([['Case 6', 'Case 3', 'Case 0'], 3]);
      const none = await list(dora, '?folderId=renal&archived=true');
      expect([titles(none), none.total]).toEqual([[], 0]);
      expect((await list(dora, '?folderId=elsewhere')).total).toBe(0);
    });

    it('keeps its totals through moves between folders, archiving and deletion', async () => {
      const eve = await createUser(t.app, t.deps);
      const a = await create(eve, { title: 'A', folder_id: 'x' });
      const b = await create(eve, { title: 'B' });
      dataOf(await call(eve, 'PUT', `/conversations/${a.id}`, { folder_id: 'y', archived: true }));
      dataOf(await call(eve, 'PUT', `/conversations/${b.id}`, { title: 'B2' }));
      expect((await list(eve, '?folderId=x')).total).toBe(0);
      expect((await list(eve, '?folderId=y&archived=true')).total).toBe(1);
      dataOf(await call(eve, 'DELETE', `/conversations/${a.id}`));
      expect((await list(eve)).total).toBe(1);
      expect((await list(eve, '?archived=true')).total).toBe(0);
      const [row] = await t.deps.database.db
        .select({ n: sql<number>`sum(${conversationCounts.n})::int` })
        .from(conversationCounts)
        .where(eq(conversationCounts.userId, eve.id));
      expect(row?.n).toBe(1);
    });
  });

  describe('branches and threads', () => {
    it('reads nested branches as the thread of their ancestors up to each fork point', async () => {
      const c = await create(alice, { title: 'Branching' });
      const main = await say(alice, c.id, 6); // m0..m5
      // b1 forks after m3 and says three things; b2 forks from b1's second message; b3 from main m1.
      const b1 = await fork(alice, c.id, { parent_message_id: main[3] });
      expect(b1).toMatchObject({ parentMessageId: main[3], messageCount: 0, lastMessageAt: null });
      expect(b1.id).toMatch(/^[0-9a-f-]{36}$/);
      const own1 = await say(alice, c.id, 3, b1.id);
      const b2 = await fork(alice, c.id, { parent_message_id: own1[1], initial_message: 'Deeper' });
      expect(b2.messageCount).toBe(1);
      const own2 = await say(alice, c.id, 2, b2.id);
      await say(alice, c.id, 2); // main keeps growing after the forks: m6, m7
      const b3 = await fork(alice, c.id, { parent_message_id: main[1], initial_message: 'Early' });

      const deep = await thread(alice, c.id, `?branch_id=${b2.id}`);
      const expectedIds = [...main.slice(0, 4), own1[0], own1[1], deep.items[6]?.id, ...own2];
      expect(deep.items.map((m) => m.id)).toEqual(expectedIds);
      expect(deep.items[6]).toMatchObject({ role: 'user', content: 'Deeper', branchId: b2.id });
      expect(deep.total).toBe(9);
      // Each message follows the one before it on the thread.
      deep.items.forEach((m, i) => {
        expect(m.parentMessageId).toBe(i === 0 ? null : deep.items[i - 1]?.id);
      });
      const early = await thread(alice, c.id, `?branch_id=${b3.id}`);
      expect(early.items.map((m) => m.content)).toEqual(['main 0', 'main 1', 'Early']);
      expect((await thread(alice, c.id)).items.map((m) => m.content)).toEqual([
        'main 0',
        'main 1',
        'main 2',
        'main 3',
        'main 4',
        'main 5',
        'main 0',
        'main 1',
      ]);

      const conversation = dataOf<ConversationDto>(
        await call(alice, 'GET', `/conversations/${c.id}`),
      );
      expect(conversation.messageCount).toBe(6 + 3 + 1 + 2 + 2 + 1);
      const { items, total } = dataOf<{ items: BranchDto[]; total: number }>(
        await call(alice, 'GET', `/conversations/${c.id}/branches`),
      );
      expect(total).toBe(4);
      expect(items.map((b) => [b.id, b.messageCount])).toEqual([
        ['main', 8],
        [b1.id, 3],
        [b2.id, 3],
        [b3.id, 1],
      ]);
      expect(items[3]?.lastMessageAt).toBe(conversation.updatedAt);
    });

    it('returns the newest `limit` of a thread, oldest first, and pages back with `before`', async () => {
      const c = await create(alice, { title: 'Long' });
      const ids = await say(alice, c.id, 9);
      const b = await fork(alice, c.id, { parent_message_id: ids[6] });
      const own = await say(alice, c.id, 3, b.id);
      const whole = [...ids.slice(0, 7), ...own];
      const newest = await thread(alice, c.id, `?branch_id=${b.id}&limit=4`);
      expect(newest).toMatchObject({ total: 10, limit: 4 });
      expect(newest.items.map((m) => m.id)).toEqual(whole.slice(6));
      const pages: string[][] = [];
      let before = newest.items[0]?.id;
      while (before !== undefined) {
        const page = await thread(alice, c.id, `?branch_id=${b.id}&limit=4&before=${before}`);
        pages.unshift(page.items.map((m) => m.id));
        before = page.items[0]?.id;
      }
      expect([...pages.flat(), ...newest.items.map((m) => m.id)]).toEqual(whole);
      // A message of the main branch after the fork point is not on the fork's thread.
      const err = errorOf(
        await call(
          alice,
          'GET',
          `/conversations/${c.id}/messages?branch_id=${b.id}&before=${ids[8] ?? ''}`,
        ),
        404,
      );
      expect(err.message).toBe('Message not found on this thread');
    });

    it('refuses unknown branches and fork points outside the conversation', async () => {
      const c = await create(alice);
      const other = await create(alice);
      const [foreign] = await say(alice, other.id, 1);
      const unknownBranch = await call(
        alice,
        'GET',
        `/conversations/${c.id}/messages?branch_id=${randomUUID()}`,
      );
      expect(errorOf(unknownBranch, 404).message).toBe('Branch not found');
      const named = await call(alice, 'GET', `/conversations/${c.id}/messages?branch_id=feature`);
      expect(errorOf(named, 404).message).toBe('Branch not found');
      for (const id of [foreign, randomUUID()]) {
        const res = await call(alice, 'POST', `/conversations/${c.id}/branches`, {
          parent_message_id: id,
        });
        expect(errorOf(res, 404).message).toBe('Message not found in this conversation');
      }
      await expect(
        t.deps.messages.append(alice.id, c.id, {
          branchId: randomUUID(),
          role: 'user',
          content: 'x',
        }),
      ).rejects.toThrow('Branch not found');
      const { items } = dataOf<{ items: BranchDto[] }>(
        await call(alice, 'GET', `/conversations/${c.id}/branches`),
      );
      expect(items).toHaveLength(1);
    });
  });

  describe('the message service', () => {
    it('stores a turn once per client message id and branch, and finds its answer', async () => {
      const c = await create(alice);
      const first = await t.deps.messages.append(alice.id, c.id, {
        role: 'user',
        content: 'Dose of amoxicillin?',
        clientMessageId: 'turn-1',
      });
      expect(first.created).toBe(true);
      const answer = await t.deps.messages.append(alice.id, c.id, {
        role: 'assistant',
        content: 'See [1]\u0000.',
        citations: [
          {
            index: 1,
            documentId: randomUUID(),
            docKey: 'bnf-amoxicillin',
            title: 'Amoxicillin',
            version: 2,
            chunkId: 'c-1',
            page: 4,
            snippet: '500 mg three times daily',
            score: 0.82,
          },
        ],
        toolCalls: [
          {
            id: 'call-1',
            name: 'kb_search',
            arguments: { query: 'amoxicillin' },
            result: { hits: 1 },
            error: null,
            durationMs: 12,
          },
        ],
        interrupted: true,
      });
      const again = await t.deps.messages.append(alice.id, c.id, {
        role: 'user',
        content: 'Dose of amoxicillin? (resent)',
        clientMessageId: 'turn-1',
      });
      expect(again).toEqual({ message: first.message, created: false });
      expect(await t.deps.messages.replyTo(first.message)).toEqual(answer.message);
      const { items } = await thread(alice, c.id);
      expect(items).toHaveLength(2);
      expect(items[1]).toMatchObject({
        content: 'See [1]\uFFFD.',
        interrupted: true,
        citations: [{ index: 1, docKey: 'bnf-amoxicillin', page: 4, score: 0.82 }],
        toolCalls: [
          { name: 'kb_search', arguments: { query: 'amoxicillin' }, result: { hits: 1 } },
        ],
        clientMessageId: null,
      });
      expect(items[0]?.clientMessageId).toBe('turn-1');
      // The same client id on another branch is another turn.
      const b = await fork(alice, c.id, { parent_message_id: first.message.id });
      const elsewhere = await t.deps.messages.append(alice.id, c.id, {
        branchId: b.id,
        role: 'user',
        content: 'Again, elsewhere',
        clientMessageId: 'turn-1',
      });
      expect(elsewhere.created).toBe(true);
    });

    it('keeps counts, order and parent links right under parallel writers', async () => {
      const c = await create(alice);
      const [root] = await say(alice, c.id, 1);
      const b = await fork(alice, c.id, { parent_message_id: root });
      const writers = Array.from({ length: 24 }, (_, i) =>
        t.deps.messages.append(alice.id, c.id, {
          branchId: i % 2 === 0 ? 'main' : b.id,
          role: 'user',
          content: `parallel ${String(i)}`,
          // Every third writer repeats the previous one's client id on the same branch.
          clientMessageId: `w-${String(i % 3 === 2 ? i - 2 : i)}`,
        }),
      );
      const results = await Promise.all(writers);
      const created = results.filter((r) => r.created).length;
      expect(created).toBe(24 - 8);
      const db = t.deps.database.db;
      const rows = await db.select().from(messages).where(eq(messages.conversationId, c.id));
      expect(rows).toHaveLength(1 + created);
      expect(rows.map((r) => r.seq).sort((x, y) => x - y)).toEqual(
        Array.from({ length: rows.length }, (_, i) => i + 1),
      );
      const conversation = dataOf<ConversationDto>(
        await call(alice, 'GET', `/conversations/${c.id}`),
      );
      expect(conversation.messageCount).toBe(rows.length);
      const last = rows.reduce((a, r) => (r.seq > a.seq ? r : a));
      expect(conversation.updatedAt).toBe(last.createdAt.toISOString());
      for (const branchId of ['main', b.id]) {
        const { items, total } = await thread(alice, c.id, `?branch_id=${branchId}&limit=200`);
        expect(items).toHaveLength(total);
        items.forEach((m, i) => {
          expect(m.parentMessageId).toBe(i === 0 ? null : items[i - 1]?.id);
        });
      }
    });

    it('counts parallel creations in the list total', async () => {
      const frank = await createUser(t.app, t.deps);
      await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          create(frank, { title: `P${String(i)}`, folder_id: 'f' }),
        ),
      );
      expect((await list(frank, '?folderId=f')).total).toBe(12);
      expect((await list(frank, '?pageSize=100')).items).toHaveLength(12);
    });
  });
});
