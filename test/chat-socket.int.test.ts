import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, type TestUser } from './helpers/factories.js';
import { uploadNew, waitForJob } from './helpers/knowledge.js';
import { ChatClient, listenLocal, type Frame } from './helpers/ws-client.js';

/**
 * The chat socket (DECISIONS 4) through a real client against a listening server, with the
 * offline extractive model over a small knowledge base.
 */

const GUIDE = [
  'Metformin dosing in type 2 diabetes',
  '',
  'Start metformin at 500 mg once daily with the evening meal. Increase the dose by 500 mg every',
  'one to two weeks as tolerated, up to 2000 mg a day. Do not start metformin when the eGFR is',
  'below 30 mL/min/1.73 m2. Review the dose when the eGFR falls below 45 mL/min/1.73 m2.',
  '',
  'Hypertension targets',
  '',
  'For most adults with hypertension the clinic blood pressure target is below 140/90 mmHg.',
  'Adults over 80 years have a target below 150/90 mmHg.',
].join('\n');

interface Message {
  id: string;
  role: string;
  content: string;
  citations: { index: number; chunkId: string; snippet: string }[];
  toolCalls: { name: string; result: Record<string, unknown> | null }[];
  interrupted: boolean;
  clientMessageId: string | null;
}

describe('chat socket', () => {
  let t: TestApp;
  let port: number;
  let user: TestUser;
  let other: TestUser;
  const clients: ChatClient[] = [];
  const connect = async (token = user.access, path = '/ws') => {
    const client = await ChatClient.connect(port, token, path);
    clients.push(client);
    return client;
  };
  const conversation = async (owner = user, title?: string) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/conversations',
      headers: bearer(owner.access),
      payload: title === undefined ? {} : { title },
    });
    expect(res.statusCode, res.body).toBe(201);
    return dataOf<{ id: string; title: string }>(res).id;
  };
  const thread = async (conversationId: string) => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/conversations/${conversationId}/messages`,
      headers: bearer(user.access),
    });
    expect(res.statusCode, res.body).toBe(200);
    return dataOf<{ items: Message[] }>(res).items;
  };
  const ask = async (client: ChatClient, conversationId: string, content: string, extra = {}) => {
    const from = client.frames.length;
    client.send({ type: 'message_send', conversation_id: conversationId, content, ...extra });
    const done = await client.next((f) => f.type === 'message_done', 10_000, from);
    return { done, frames: client.frames.slice(from) };
  };

  /** Every log line, at debug level: none may carry a question, an answer or a token. */
  const logged: string[] = [];

  beforeAll(async () => {
    t = await createTestApp({
      env: { LOG_LEVEL: 'debug' },
      logDestination: {
        write: (line: string) => {
          logged.push(line);
        },
      },
    });
    const admin = await createUser(t.app, t.deps, { admin: true });
    user = await createUser(t.app, t.deps);
    other = await createUser(t.app, t.deps);
    const doc = await uploadNew(t.app, admin.access, { file: GUIDE, title: 'Diabetes and BP' });
    await waitForJob(t.app, admin.access, doc.job?.id ?? '', 'completed');
    port = await listenLocal(t.app);
  });
  afterEach(async () => {
    // Each test's sockets close, so none counts against the next test's per-user limit.
    const open = clients.splice(0);
    for (const c of open) c.close();
    await Promise.all(open.map((c) => c.closed));
  });
  afterAll(async () => {
    await t.close();
  });

  it('greets with connected on both paths', async () => {
    for (const path of ['/ws', '/api/realtime/ws']) {
      const client = await connect(user.access, path);
      expect(client.frames[0]).toMatchObject({
        type: 'connected',
        user_id: user.id,
        protocol_version: '1.0',
      });
      expect(typeof client.frames[0]?.connection_id).toBe('string');
      expect(Number.isNaN(Date.parse(String(client.frames[0]?.server_time)))).toBe(false);
    }
  });

  it.each([
    ['no token', null],
    ['a garbage token', 'not-a-jwt'],
  ])('refuses %s: error UNAUTHORIZED, then close 4401', async (_name, token) => {
    const client = await ChatClient.open(port, token);
    const closed = await client.closed;
    expect(closed.code).toBe(4401);
    expect(client.frames).toEqual([
      expect.objectContaining({ type: 'error', code: 'UNAUTHORIZED' }),
    ]);
  });

  it('refuses a token revoked by logout', async () => {
    const session = await createUser(t.app, t.deps);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: bearer(session.access),
    });
    expect(res.statusCode, res.body).toBe(200);
    const client = await ChatClient.open(port, session.access);
    expect((await client.closed).code).toBe(4401);
  });

  it('streams a cited answer and stores both turns', async () => {
    const conversationId = await conversation();
    const client = await connect();
    const { done, frames } = await ask(
      client,
      conversationId,
      'What dose should metformin start at?',
    );
    const chunks = frames.filter((f) => f.type === 'chunk');
    expect(chunks.length).toBeGreaterThan(1);
    chunks.forEach((c, i) => {
      expect(c).toMatchObject({ index: i, conversation_id: conversationId });
    });
    const message = done.message as Message;
    const question = done.user_message as Message;
    expect(chunks.map((c) => c.delta).join('')).toBe(message.content);
    expect(chunks[0]).toMatchObject({ message_id: message.id, user_message_id: question.id });
    expect(message.content).toContain('500 mg once daily');
    // Every [n] has its citation, numbered from 1, and each points at a chunk holding the text.
    const markers = [...message.content.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
    expect(markers.length).toBeGreaterThan(0);
    expect(message.citations.map((c) => c.index)).toEqual(
      [...new Set(markers)].sort((a, b) => a - b),
    );
    expect(message.citations[0]?.index).toBe(1);
    const stored = await thread(conversationId);
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(stored[1]).toMatchObject({
      id: message.id,
      content: message.content,
      interrupted: false,
    });
  });

  it('names an untitled conversation after its first question', async () => {
    const conversationId = await conversation();
    const client = await connect();
    await ask(client, conversationId, 'What is the blood pressure target for adults over 80?');
    const res = await t.app.inject({
      method: 'GET',
      url: `/conversations/${conversationId}`,
      headers: bearer(user.access),
    });
    expect(dataOf<{ title: string }>(res).title).toBe(
      'What is the blood pressure target for adults over 80?',
    );
  });

  it('answers a calculator request through the tool', async () => {
    const conversationId = await conversation(user, 'BMI');
    const client = await connect();
    const { done, frames } = await ask(client, conversationId, 'BMI for 80 kg and 1.80 m');
    const call = frames.find((f) => f.type === 'tool_call');
    const result = frames.find((f) => f.type === 'tool_result');
    expect(call).toMatchObject({ call: { name: 'medical_calculator', result: null } });
    expect(result).toMatchObject({ call: { name: 'medical_calculator', error: null } });
    const message = done.message as Message;
    expect(message.content).toContain('24.7');
    expect(message.toolCalls).toHaveLength(1);
    expect(message.toolCalls[0]?.result).toMatchObject({ value: 24.7 });
  });

  it('a repeated client_message_id answers the existing turn', async () => {
    const conversationId = await conversation(user, 'Idempotent');
    const client = await connect();
    const first = await ask(client, conversationId, 'Metformin start dose?', {
      client_message_id: 'c-1',
    });
    const again = await ask(client, conversationId, 'Metformin start dose?', {
      client_message_id: 'c-1',
    });
    expect(again.frames.filter((f) => f.type === 'chunk')).toEqual([]);
    expect((again.done.message as Message).id).toBe((first.done.message as Message).id);
    expect(await thread(conversationId)).toHaveLength(2);
  });

  it("another user's conversation is NOT_FOUND and the socket stays usable", async () => {
    const foreign = await conversation(other, 'Theirs');
    const client = await connect();
    client.send({
      type: 'message_send',
      conversation_id: foreign,
      content: 'hello',
      request_ref: 'r1',
    });
    const error = await client.next((f) => f.type === 'error');
    expect(error).toMatchObject({ code: 'NOT_FOUND', request_ref: 'r1' });
    await client.roundTrip();
  });

  it.each<[string, unknown, string]>([
    ['invalid JSON', '{"type":', 'VALIDATION_ERROR'],
    ['an array', '[1,2]', 'VALIDATION_ERROR'],
    ['an unknown type', { type: 'explode' }, 'VALIDATION_ERROR'],
    ['a missing field', { type: 'message_send', content: 'x' }, 'VALIDATION_ERROR'],
    ['an extra field', { type: 'ping', extra: 1 }, 'VALIDATION_ERROR'],
    ['a wrong type', { type: 'message_cancel', message_id: 42 }, 'VALIDATION_ERROR'],
    [
      'a blank message',
      {
        type: 'message_send',
        conversation_id: '00000000-0000-4000-8000-000000000000',
        content: '  ',
      },
      'VALIDATION_ERROR',
    ],
    ['a 70 KiB frame', { type: 'ping', ts: 'x'.repeat(70 * 1024) }, 'PAYLOAD_TOO_LARGE'],
  ])('%s: an error frame, and the socket stays usable', async (_name, frame, code) => {
    const client = await connect();
    client.send(frame);
    expect(await client.next((f) => f.type === 'error')).toMatchObject({ code });
    await client.roundTrip();
  });

  it('a binary frame is refused and the socket stays usable', async () => {
    const client = await connect();
    client.ws.send(Buffer.from([1, 2, 3]));
    expect(await client.next((f) => f.type === 'error')).toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    await client.roundTrip();
  });

  it('typing reaches the user’s other sockets, not the sender nor other users', async () => {
    const a = await connect();
    const b = await connect();
    const stranger = await connect(other.access);
    const conversationId = await conversation(user, 'Typing');
    a.send({ type: 'typing_start', conversation_id: conversationId });
    expect(await b.next((f) => f.type === 'typing')).toEqual({
      type: 'typing',
      conversation_id: conversationId,
      user_id: user.id,
      active: true,
    });
    a.send({ type: 'typing_stop', conversation_id: conversationId });
    await b.next((f) => f.type === 'typing' && f.active === false);
    await a.roundTrip();
    await stranger.roundTrip();
    expect(a.ofType('typing')).toEqual([]);
    expect(stranger.ofType('typing')).toEqual([]);
  });

  it('ping answers pong with the same ts', async () => {
    const client = await connect();
    client.send({ type: 'ping', ts: 1234 });
    expect(await client.next((f) => f.type === 'pong')).toEqual({ type: 'pong', ts: 1234 });
    client.send({ type: 'ping' });
    expect(await client.next((f) => f.type === 'pong' && f.ts === null)).toBeTruthy();
  });

  it('resume of an unknown or foreign message is NOT_FOUND', async () => {
    const conversationId = await conversation(user, 'Mine');
    const mine = await connect();
    const { done } = await ask(mine, conversationId, 'Metformin start dose?');
    const messageId = (done.message as Message).id;
    const stranger = await connect(other.access);
    stranger.send({ type: 'message_resume', message_id: messageId });
    expect(await stranger.next((f) => f.type === 'error')).toMatchObject({ code: 'NOT_FOUND' });
    // The owner gets message_done at once for a finished answer.
    const from = mine.frames.length;
    mine.send({ type: 'message_resume', message_id: messageId });
    const again: Frame = await mine.next((f) => f.type === 'message_done', 5000, from);
    expect((again.message as Message).id).toBe(messageId);
  });

  it('logs sockets and turns without their content or tokens', () => {
    const all = logged.join('');
    expect(all).toContain('chat socket opened');
    for (const secret of ['metformin', 'Metformin', 'BMI for 80', '500 mg', user.access]) {
      expect(all).not.toContain(secret);
    }
  });

  it('counts open sockets by endpoint and times first chunks in /metrics', async () => {
    const a = await connect(user.access, '/api/realtime/ws');
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    const open = /^ws_connections\{endpoint="\/api\/realtime\/ws"\} (\d+)$/m.exec(res.body);
    expect(Number(open?.[1])).toBeGreaterThanOrEqual(1);
    const timed = /^chat_first_chunk_seconds_count (\d+)$/m.exec(res.body);
    expect(Number(timed?.[1])).toBeGreaterThan(0);
    a.close();
  });

  it('a branch forked from a chat answer is chatted on with its own thread', async () => {
    const conversationId = await conversation(user, 'Forked');
    const client = await connect();
    const first = await ask(client, conversationId, 'What dose should metformin start at?');
    const answerId = (first.done.message as Message).id;
    await ask(client, conversationId, 'And the blood pressure target?');
    const fork = await t.app.inject({
      method: 'POST',
      url: `/conversations/${conversationId}/branches`,
      headers: bearer(user.access),
      payload: { parent_message_id: answerId },
    });
    expect(fork.statusCode, fork.body).toBe(201);
    const branchId = dataOf<{ id: string }>(fork).id;
    const onBranch = await ask(client, conversationId, 'When should metformin not be started?', {
      branch_id: branchId,
    });
    const question = onBranch.done.user_message as Message & {
      branchId: string;
      parentMessageId: string;
    };
    expect(question).toMatchObject({ branchId, parentMessageId: answerId });
    expect((onBranch.done.message as Message).content).toContain('eGFR');
    const res = await t.app.inject({
      method: 'GET',
      url: `/conversations/${conversationId}/messages?branch_id=${branchId}`,
      headers: bearer(user.access),
    });
    // The fork's thread: the first turn, then the branch's own turn; not the main branch's second.
    expect(dataOf<{ items: Message[] }>(res).items.map((m) => m.content.slice(0, 20))).toEqual([
      'What dose should met',
      (first.done.message as Message).content.slice(0, 20),
      'When should metformi',
      (onBranch.done.message as Message).content.slice(0, 20),
    ]);
    client.send({
      type: 'message_send',
      conversation_id: conversationId,
      content: 'x',
      branch_id: 'nope',
    });
    expect(await client.next((f) => f.type === 'error')).toMatchObject({ code: 'NOT_FOUND' });
  });
});
