import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiLlmProvider } from '../src/providers/llm/openai.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, type TestUser } from './helpers/factories.js';
import { multipartBody } from './helpers/knowledge.js';
import { growth, promtoolCheck, scrape } from './helpers/metrics.js';
import { OpenAiChatServer } from './helpers/openai-chat-server.js';
import { speak } from './helpers/speech-audio.js';
import { ChatClient, listenLocal, newConversation, storedThread } from './helpers/ws-client.js';

/**
 * Token usage (issue 22 item 6): the `openai` provider against a local server replaying recorded
 * OpenAI streams, whose last chunk carries `usage` (tool round: 530 in, 64 out; answer: 612 in,
 * 41 out). The answer is stored with the sum, `/metrics` counts it in `llm_tokens_total`, and the
 * admin panel's metrics add up the stored answers.
 */

const TOOLS = { kind: 'sse', fixture: 'tool-calls-parallel.sse' } as const;
const TEXT = { kind: 'sse', fixture: 'text-with-usage.sse' } as const;
const MODEL = 'gpt-4o-mini';
const usage = (inputTokens: number, outputTokens: number) => ({
  provider: 'openai',
  model: MODEL,
  inputTokens,
  outputTokens,
});
const TOOL_ROUND = usage(530, 64);
const BOTH_ROUNDS = usage(530 + 612, 64 + 41);

interface Message {
  id: string;
  role: string;
  interrupted: boolean;
  usage: ReturnType<typeof usage> | null;
}

interface Counts {
  answers: number;
  input_tokens: number;
  output_tokens: number;
}

interface LlmTokens {
  scope: string;
  since: string;
  total: { last_24h: Counts; all_time: Counts };
  by_model: { provider: string; model: string; last_24h: Counts; all_time: Counts }[];
}

type Scrape = Awaited<ReturnType<typeof scrape>>;

/** How much llm_tokens_total{provider="openai"} grew in each direction between two scrapes. */
const tokensGrown = (before: Scrape, after: Scrape) =>
  (['input', 'output'] as const).map((direction) =>
    growth(before.exposition, after.exposition, 'llm_tokens_total', {
      provider: 'openai',
      direction,
    }),
  );

describe.each(['postgres', 'pglite'] as const)('token usage (%s)', (backend) => {
  const llm = new OpenAiChatServer();
  let t: TestApp;
  let port: number;
  let user: TestUser;
  let admin: TestUser;
  const clients: ChatClient[] = [];

  const thread = (conversationId: string) =>
    storedThread<Message>(t.app, user.access, conversationId);
  const panelTokens = async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/admin/panel/metrics',
      headers: bearer(admin.access),
    });
    return dataOf<{ llm_tokens: LlmTokens }>(res).llm_tokens;
  };
  /** Sends a question on a new conversation; resolves with the client and the conversation. */
  const ask = async (who = user) => {
    const conversationId = await newConversation(t.app, who.access);
    const client = await ChatClient.connect(port, who.access);
    clients.push(client);
    client.send({ type: 'message_send', conversation_id: conversationId, content: 'Metformin?' });
    return { client, conversationId };
  };

  beforeAll(async () => {
    await llm.start();
    t = await createTestApp({
      backend,
      llm: new OpenAiLlmProvider({ baseUrl: llm.baseUrl, model: MODEL, timeoutMs: 2000 }),
    });
    user = await createUser(t.app, t.deps);
    admin = await createUser(t.app, t.deps, { admin: true });
    port = await listenLocal(t.app);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await t.close();
    await llm.stop();
  });

  it('stores the tokens of every model call of the turn with the answer, and counts them', async () => {
    const metricsBefore = await scrape(t.app);
    const panelBefore = await panelTokens();
    llm.script(TOOLS, TEXT);
    const { client, conversationId } = await ask();
    const done = await client.next((f) => f.type === 'message_done');

    // Both requests asked for the usage chunk; the answer holds the sum of both calls.
    expect(llm.requests.map((r) => r.body.stream_options)).toEqual([
      { include_usage: true },
      { include_usage: true },
    ]);
    expect((done.message as Message).usage).toEqual(BOTH_ROUNDS);
    expect((done.user_message as Message).usage).toBeNull();
    const [question, answer] = await thread(conversationId);
    expect(question).toMatchObject({ role: 'user', usage: null });
    expect(answer).toMatchObject({ role: 'assistant', interrupted: false, usage: BOTH_ROUNDS });

    const metricsAfter = await scrape(t.app);
    expect(tokensGrown(metricsBefore, metricsAfter)).toEqual([1142, 105]);
    const { code, lines } = await promtoolCheck(metricsAfter.text);
    expect(lines.filter((l) => l.startsWith('llm_tokens'))).toEqual([]);
    expect([0, 3]).toContain(code);

    const panel = await panelTokens();
    expect(panel.scope).toBe('cluster');
    const entry = panel.by_model.find((m) => m.provider === 'openai' && m.model === MODEL);
    const entryBefore = panelBefore.by_model.find((m) => m.model === MODEL);
    const added = (after: Counts, before: Counts | undefined) => ({
      answers: after.answers - (before?.answers ?? 0),
      input_tokens: after.input_tokens - (before?.input_tokens ?? 0),
      output_tokens: after.output_tokens - (before?.output_tokens ?? 0),
    });
    const one = { answers: 1, input_tokens: 1142, output_tokens: 105 };
    expect(added(entry?.all_time ?? one, entryBefore?.all_time)).toEqual(one);
    expect(added(entry?.last_24h ?? one, entryBefore?.last_24h)).toEqual(one);
    expect(added(panel.total.all_time, panelBefore.total.all_time)).toEqual(one);
  });

  it('a cancelled turn keeps the usage reported before the cancel', async () => {
    llm.script(TOOLS, { ...TEXT, delayMs: 60 });
    const { client, conversationId } = await ask();
    const chunk = await client.next((f) => f.type === 'chunk');
    client.send({ type: 'message_cancel', message_id: chunk.message_id });
    const done = await client.next((f) => f.type === 'message_done');
    // The answer's own call was cut before its last chunk: only the tool round is known.
    expect(done.message).toMatchObject({ interrupted: true, usage: TOOL_ROUND });
    expect((await thread(conversationId))[1]).toMatchObject({ usage: TOOL_ROUND });
  });

  it('a turn the model failed keeps the usage reported before the failure', async () => {
    llm.script(TOOLS, { ...TEXT, events: 3, then: 'reset' });
    const { client, conversationId } = await ask();
    await client.next((f) => f.type === 'error' && f.code === 'LLM_ERROR');
    const done = await client.next((f) => f.type === 'message_done');
    expect(done.message).toMatchObject({ interrupted: true, usage: TOOL_ROUND });
    expect((await thread(conversationId))[1]).toMatchObject({ usage: TOOL_ROUND });
  });

  it('a server that sends no usage leaves it null and counts nothing', async () => {
    const metricsBefore = await scrape(t.app);
    const panelBefore = await panelTokens();
    llm.script({ kind: 'sse', fixture: 'text-no-usage.sse' });
    const { client, conversationId } = await ask();
    const done = await client.next((f) => f.type === 'message_done');
    expect(done.message).toMatchObject({ interrupted: false, usage: null });
    expect((await thread(conversationId))[1]).toMatchObject({ role: 'assistant', usage: null });
    expect(tokensGrown(metricsBefore, await scrape(t.app))).toEqual([0, 0]);
    expect((await panelTokens()).total).toEqual(panelBefore.total);
  });

  it('the panel counts an answer of two days ago in all time, not in the last 24 hours', async () => {
    const conversationId = await newConversation(t.app, user.access);
    const before = await panelTokens();
    // An answer stored two days ago (the service stores with the database's clock).
    const old = { provider: 'openai', model: 'gpt-4o', inputTokens: 70, outputTokens: 9 };
    await t.deps.database.db.execute(
      sql`insert into messages (id, conversation_id, branch_id, seq, role, content, usage, created_at)
        values (gen_random_uuid(), ${conversationId}, 'main', 1, 'assistant', 'Earlier answer.',
                ${JSON.stringify(old)}::json, now() - interval '2 days')`,
    );
    const after = await panelTokens();
    const counts = { answers: 1, input_tokens: 70, output_tokens: 9 };
    expect(after.by_model.find((m) => m.model === 'gpt-4o')).toEqual({
      provider: 'openai',
      model: 'gpt-4o',
      last_24h: { answers: 0, input_tokens: 0, output_tokens: 0 },
      all_time: counts,
    });
    expect(after.total.last_24h).toEqual(before.total.last_24h);
    expect(after.total.all_time).toEqual({
      answers: before.total.all_time.answers + 1,
      input_tokens: before.total.all_time.input_tokens + 70,
      output_tokens: before.total.all_time.output_tokens + 9,
    });
    // The window is the current hour (UTC) and the 23 before it.
    const hour = 3_600_000;
    expect(Date.parse(after.since)).toBe(Math.floor(Date.now() / hour) * hour - 23 * hour);
  });

  it('answers stored at once in many conversations all count, to the token', async () => {
    // Users of their own: one user may have only 3 answers generating at once.
    const n = 8;
    const users = await Promise.all(Array.from({ length: n }, () => createUser(t.app, t.deps)));
    const before = await panelTokens();
    llm.script(...Array.from({ length: n }, () => TEXT));
    const asked = await Promise.all(users.map((who) => ask(who)));
    await Promise.all(asked.map(({ client }) => client.next((f) => f.type === 'message_done')));
    const after = await panelTokens();
    expect(after.total.all_time).toEqual({
      answers: before.total.all_time.answers + n,
      input_tokens: before.total.all_time.input_tokens + n * 612,
      output_tokens: before.total.all_time.output_tokens + n * 41,
    });
    expect(after.total.last_24h.answers).toBe(before.total.last_24h.answers + n);
  });

  it('deleting a conversation does not lower the totals: its tokens were spent', async () => {
    llm.script(TEXT);
    const { client, conversationId } = await ask();
    await client.next((f) => f.type === 'message_done');
    const before = await panelTokens();
    const removed = await t.app.inject({
      method: 'DELETE',
      url: `/conversations/${conversationId}`,
      headers: bearer(user.access),
    });
    expect(removed.statusCode, removed.body).toBe(200);
    expect((await panelTokens()).total).toEqual(before.total);
  });

  it('the voice socket stores the usage with its answer', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/voice/session',
      headers: bearer(user.access),
      payload: {},
    });
    const session = dataOf<{ conversation_id: string; socket_url: string }>(res);
    const client = await ChatClient.connect(port, user.access, session.socket_url);
    clients.push(client);
    llm.script(TOOLS, TEXT);
    client.send({ type: 'text.input', text: 'Metformin?' });
    const complete = await client.next((f) => f.type === 'response.complete', 60_000);
    const stored = await thread(session.conversation_id);
    expect(stored.find((m) => m.id === complete.message_id)).toMatchObject({
      role: 'assistant',
      usage: BOTH_ROUNDS,
    });
  });

  it('POST /api/voice/audio stores the usage with its answer', async () => {
    llm.script(TEXT);
    const { payload, contentType } = multipartBody([
      {
        name: 'file',
        filename: 'question.raw',
        content: await speak('what dose of metformin'),
        contentType: 'audio/wav',
      },
    ]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/voice/audio',
      headers: { ...bearer(user.access), 'content-type': contentType },
      payload,
    });
    const answer = dataOf<{ conversation_id: string; message_id: string | null }>(res);
    expect(answer.message_id).not.toBeNull();
    const stored = await thread(answer.conversation_id);
    expect(stored.find((m) => m.id === answer.message_id)).toMatchObject({
      usage: usage(612, 41),
    });
  });
});
