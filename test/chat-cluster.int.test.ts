import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiLlmProvider } from '../src/providers/llm/openai.js';
import { createSecondInstance, createTestApp, type TestApp } from './helpers/app.js';
import { historyOf, storedThread, turnsOf } from './helpers/chat-thread.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { OpenAiChatServer } from './helpers/openai-chat-server.js';
import { ChatClient, newConversation } from './helpers/ws-client.js';

/**
 * Two app instances on one PostgreSQL database and one Redis act as one chat service: typing,
 * message_done, resume and cancel cross between them (DECISIONS 4, issue 10); turns on a branch
 * take turns and a user's answers are counted across them (issue 22).
 */

const SLOW = { kind: 'sse', fixture: 'text-with-usage.sse', delayMs: 60 } as const;

describe('two instances, one Redis', () => {
  const llm = new OpenAiChatServer();
  let one: TestApp;
  let two: TestApp;
  const ports: number[] = [];
  let user: TestUser;
  const clients: ChatClient[] = [];
  const connect = async (instance: 0 | 1) => {
    const client = await ChatClient.connect(ports[instance] ?? 0, user.access);
    clients.push(client);
    return client;
  };
  const conversation = async () => {
    return await newConversation(one.app, user.access);
  };
  const model = () =>
    new OpenAiLlmProvider({ baseUrl: llm.baseUrl, model: 'gpt-4o-mini', timeoutMs: 5000 });

  beforeAll(async () => {
    await llm.start();
    one = await createTestApp({ llm: model() });
    two = await createSecondInstance(one, { llm: model() });
    for (const t of [one, two]) {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      ports.push((t.app.server.address() as AddressInfo).port);
    }
    user = await createUser(one.app, one.deps);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await two.close();
    await one.close();
    await llm.stop();
  });

  it('typing on one instance reaches the user’s socket on the other', async () => {
    const a = await connect(0);
    const b = await connect(1);
    const conversationId = await conversation();
    a.send({ type: 'typing_start', conversation_id: conversationId });
    expect(await b.next((f) => f.type === 'typing')).toMatchObject({
      conversation_id: conversationId,
      active: true,
    });
  });

  it('an answer dropped on one instance is resumed on the other', async () => {
    llm.script(SLOW);
    const conversationId = await conversation();
    const a = await connect(0);
    a.send({ type: 'message_send', conversation_id: conversationId, content: 'Metformin?' });
    const chunk = await a.next((f) => f.type === 'chunk' && f.index === 2);
    a.close();
    const b = await connect(1);
    b.send({ type: 'message_resume', message_id: chunk.message_id, after_index: 2 });
    const done = await b.next((f) => f.type === 'message_done');
    const seen = a.ofType('chunk').filter((c) => Number(c.index) <= 2);
    const resumed = b.ofType('chunk');
    expect(resumed[0]?.index).toBe(3);
    expect([...seen, ...resumed].map((c) => c.delta).join('')).toBe(
      (done.message as { content: string }).content,
    );
  });

  it('a cancel sent to one instance stops the answer generating on the other', async () => {
    llm.script(SLOW);
    const conversationId = await conversation();
    const a = await connect(0);
    const b = await connect(1);
    a.send({ type: 'message_send', conversation_id: conversationId, content: 'Metformin?' });
    const chunk = await a.next((f) => f.type === 'chunk');
    b.send({ type: 'message_cancel', message_id: chunk.message_id });
    const doneB = await b.next((f) => f.type === 'message_done');
    const doneA = await a.next((f) => f.type === 'message_done');
    expect(doneA.message).toMatchObject({ id: chunk.message_id, interrupted: true });
    expect(doneB.message).toEqual(doneA.message);
    // The model's request was aborted, not read to its end.
    await llm.requests.at(-1)?.closed;
  });

  it('message_done reaches the user’s sockets on the other instance', async () => {
    llm.script({ kind: 'sse', fixture: 'text-with-usage.sse' });
    const conversationId = await conversation();
    const a = await connect(0);
    const b = await connect(1);
    a.send({ type: 'message_send', conversation_id: conversationId, content: 'Metformin?' });
    const doneA = await a.next((f) => f.type === 'message_done');
    const doneB = await b.next((f) => f.type === 'message_done');
    expect(doneB).toEqual(doneA);
    await a.roundTrip();
    expect(a.ofType('message_done')).toHaveLength(1);
  });

  it('keeps a finished answer in a Redis Stream for 10 minutes, one entry per frame', async () => {
    llm.script({ kind: 'sse', fixture: 'text-with-usage.sse' });
    const conversationId = await conversation();
    const a = await connect(0);
    a.send({ type: 'message_send', conversation_id: conversationId, content: 'Metformin?' });
    const done = await a.next((f) => f.type === 'message_done');
    const id = (done.message as { id: string }).id;
    const redis = one.deps.redis;
    if (redis === undefined) throw new Error('the cluster test needs Redis');
    // end() runs after message_done goes out.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const entries = await redis.xrange(`chat:answer:${id}`, '-', '+');
    const frames = a.frames.filter((f) => f.message_id === id || f.type === 'message_done');
    expect(entries.map(([entryId]) => entryId)).toEqual(
      frames.map((_f, i) => `0-${String(i + 1)}`),
    );
    for (const key of [`chat:answer:${id}`, `chat:answer:${id}:info`]) {
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(9 * 60_000);
      expect(ttl).toBeLessThanOrEqual(10 * 60_000);
    }
  });

  it('questions sent to the two instances on one branch take turns: Q1, A1, Q2, A2', async () => {
    llm.script(SLOW, SLOW);
    const conversationId = await conversation();
    const a = await connect(0);
    const b = await connect(1);
    a.send({ type: 'message_send', conversation_id: conversationId, content: 'Asked on one?' });
    b.send({ type: 'message_send', conversation_id: conversationId, content: 'Asked on two?' });
    const ids = () => new Set(a.ofType('message_done').map((f) => JSON.stringify(f.message)));
    await a.next(() => ids().size === 2, 20_000);
    const turns = turnsOf(await storedThread(one.app, user.access, conversationId));
    expect(turns.map((t) => t.question.content).sort()).toEqual(['Asked on one?', 'Asked on two?']);
    const history = historyOf(llm.requests[1]);
    expect(history.slice(0, 2)).toEqual([
      { role: 'user', content: turns[0]?.question.content },
      { role: 'assistant', content: turns[0]?.answer.content },
    ]);
  });

  it('the limit of 3 answers at once counts the user’s answers on both instances', async () => {
    llm.script(SLOW, SLOW, SLOW, SLOW);
    const a = await connect(0);
    const b = await connect(1);
    const send = (client: ChatClient, conversationId: string, ref: string) => {
      client.ask(conversationId, 'Metformin?', { request_ref: ref });
    };
    const conversations = [await conversation(), await conversation(), await conversation()];
    send(a, conversations[0] ?? '', 'one');
    send(a, conversations[1] ?? '', 'two');
    send(b, conversations[2] ?? '', 'three');
    await b.next((f) => f.type === 'chunk');
    await a.next(() => new Set(a.ofType('chunk').map((f) => f.message_id)).size === 2);
    send(b, await conversation(), 'four');
    expect(await b.next((f) => f.type === 'error')).toMatchObject({
      code: 'RATE_LIMITED',
      request_ref: 'four',
    });
    // Once one has ended, a slot is free again, on either instance.
    await b.next((f) => f.type === 'message_done', 20_000);
    const before = new Set([...a.ofType('chunk'), ...b.ofType('chunk')].map((f) => f.message_id));
    send(b, await conversation(), 'five');
    const fifth = await b.next((f) => f.type === 'chunk' && !before.has(f.message_id), 20_000);
    await b.next(
      (f) => f.type === 'message_done' && (f.message as { id: string }).id === fifth.message_id,
      20_000,
    );
    expect(b.ofType('error')).toHaveLength(1);
  });
});
