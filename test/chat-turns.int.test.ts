import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiLlmProvider } from '../src/providers/llm/openai.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { historyOf, storedThread, turnsOf } from './helpers/chat-thread.js';
import { bearer, createUser, dataOf, type TestUser } from './helpers/factories.js';
import { OpenAiChatServer } from './helpers/openai-chat-server.js';
import {
  ChatClient,
  closeAll,
  listenLocal,
  newConversation,
  type Frame,
} from './helpers/ws-client.js';

/**
 * Turns on one branch are sequential (DECISIONS 4, issue 22 item 9): questions that overlap, on
 * one socket, on two sockets of the user or from the voice pipeline, are stored question, answer,
 * question, answer, each answer's parent its own question, and each later answer sees the earlier
 * turn. On both backends (Redis and PostgreSQL; the embedded defaults).
 */

/** About 0.7 s of answer: slow enough for the next question to arrive while it is generated. */
const SLOW = { kind: 'sse', fixture: 'text-with-usage.sse', delayMs: 60 } as const;

/** Answers the socket saw end: its own and, announced to all the user's sockets, the others'. */
const doneCount = (client: ChatClient) =>
  new Set(client.ofType('message_done').map((f) => (f.message as { id: string }).id)).size;

describe.each(['postgres', 'pglite'] as const)('turns on a branch take turns (%s)', (backend) => {
  const llm = new OpenAiChatServer();
  let t: TestApp;
  let port: number;
  let user: TestUser;
  const clients: ChatClient[] = [];
  const connect = async (path = '/ws') => {
    const client = await ChatClient.connect(port, user.access, path);
    clients.push(client);
    return client;
  };
  const send = (client: ChatClient, conversationId: string, content: string, extra = {}) => {
    client.ask(conversationId, content, extra);
  };
  const thread = (conversationId: string) => storedThread(t.app, user.access, conversationId);

  beforeAll(async () => {
    await llm.start();
    t = await createTestApp({
      backend,
      llm: new OpenAiLlmProvider({ baseUrl: llm.baseUrl, model: 'gpt-4o-mini', timeoutMs: 5000 }),
    });
    user = await createUser(t.app, t.deps);
    port = await listenLocal(t.app);
  });
  afterEach(async () => {
    await closeAll(clients.splice(0));
  });
  afterAll(async () => {
    await t.close();
    await llm.stop();
  });

  it('two questions sent back to back on one socket: Q1, A1, Q2, A2, and A2 saw the first turn', async () => {
    llm.script(SLOW, SLOW);
    const conversationId = await newConversation(t.app, user.access);
    const a = await connect();
    send(a, conversationId, 'How is metformin started?');
    send(a, conversationId, 'And when is it reviewed?');
    await a.next(() => doneCount(a) === 2, 20_000);
    const turns = turnsOf(await thread(conversationId));
    expect(turns.map((turn) => turn.question.content)).toEqual([
      'How is metformin started?',
      'And when is it reviewed?',
    ]);
    const [first, second] = turns;
    // The socket saw the first answer end before the second began.
    const firstDone = a.frames.findIndex((f) => f.type === 'message_done');
    const secondChunks = a.frames.flatMap((f, i) =>
      f.type === 'chunk' && f.message_id === second?.answer.id ? [i] : [],
    );
    expect(secondChunks.length).toBeGreaterThan(0);
    expect(Math.min(...secondChunks)).toBeGreaterThan(firstDone);
    expect(a.frames[firstDone]?.message).toMatchObject({ id: first?.answer.id });
    // The second answer's model request carried the first turn.
    expect(historyOf(llm.requests[0])).toHaveLength(1);
    expect(historyOf(llm.requests[1]).slice(0, 2)).toEqual([
      { role: 'user', content: 'How is metformin started?' },
      { role: 'assistant', content: first?.answer.content },
    ]);
  });

  it('questions from two sockets of the user overlap: each waits for the other’s answer', async () => {
    llm.script(SLOW, SLOW, SLOW);
    const conversationId = await newConversation(t.app, user.access);
    const a = await connect();
    const b = await connect('/api/realtime/ws');
    send(a, conversationId, 'Question from the first socket?');
    send(b, conversationId, 'Question from the second socket?');
    send(a, conversationId, 'Third question?');
    await a.next(() => doneCount(a) === 3, 30_000);
    const turns = turnsOf(await thread(conversationId));
    expect(turns.map((turn) => turn.question.content).sort()).toEqual([
      'Question from the first socket?',
      'Question from the second socket?',
      'Third question?',
    ]);
    // Questions of one socket keep the order they were sent in.
    const contents = turns.map((turn) => turn.question.content);
    expect(contents.indexOf('Third question?')).toBeGreaterThan(
      contents.indexOf('Question from the first socket?'),
    );
    turns.forEach((turn, i) => {
      const history = historyOf(llm.requests[i]);
      expect(history).toHaveLength(2 * i + 1);
      expect(history.at(-1)?.content).toContain(turn.question.content);
      if (i > 0) expect(history[2 * i - 1]?.content).toBe(turns[i - 1]?.answer.content);
    });
  });

  it('a repeated client_message_id of a question still waiting makes no second turn', async () => {
    llm.script(SLOW, SLOW, SLOW);
    const conversationId = await newConversation(t.app, user.access);
    const a = await connect();
    const b = await connect();
    send(a, conversationId, 'First?', { client_message_id: 'q-1' });
    send(a, conversationId, 'Second?', { client_message_id: 'q-2' });
    await a.next((f) => f.type === 'chunk');
    // The client thinks the second was lost and sends it again on another socket.
    send(b, conversationId, 'Second?', { client_message_id: 'q-2' });
    await a.next(() => doneCount(a) === 2, 20_000);
    const turns = turnsOf(await thread(conversationId));
    expect(turns.map((turn) => turn.question.clientMessageId)).toEqual(['q-1', 'q-2']);
    // The resend is answered with that turn.
    await b.next(
      (f) => f.type === 'message_done' && (f.message as { id: string }).id === turns[1]?.answer.id,
      20_000,
    );
    await b.roundTrip();
    expect(llm.requests).toHaveLength(2);
  });

  it('cancelling the running answer lets the next question in at once', async () => {
    const LONG = { kind: 'sse', fixture: 'text-with-usage.sse', delayMs: 400 } as const;
    llm.script(LONG, SLOW);
    const conversationId = await newConversation(t.app, user.access);
    const a = await connect();
    send(a, conversationId, 'A long question?');
    send(a, conversationId, 'A short one?');
    const chunk = await a.next((f) => f.type === 'chunk');
    a.send({ type: 'message_cancel', message_id: chunk.message_id });
    await a.next(() => doneCount(a) === 2, 20_000);
    const turns = turnsOf(await thread(conversationId));
    expect(turns.map((turn) => [turn.question.content, turn.answer.interrupted])).toEqual([
      ['A long question?', true],
      ['A short one?', false],
    ]);
    expect(historyOf(llm.requests[1])[1]).toEqual({
      role: 'assistant',
      content: turns[0]?.answer.content,
    });
  });

  it('a waiting question holds one of the user’s answer slots', async () => {
    llm.script(SLOW, SLOW, SLOW);
    const conversationId = await newConversation(t.app, user.access);
    const other = await newConversation(t.app, user.access);
    const a = await connect();
    for (const q of ['One?', 'Two?', 'Three?']) send(a, conversationId, q);
    await a.next((f) => f.type === 'chunk');
    send(a, other, 'Four?', { request_ref: 'four' });
    expect(await a.next((f) => f.type === 'error')).toMatchObject({
      code: 'RATE_LIMITED',
      request_ref: 'four',
    });
    await a.next(() => doneCount(a) === 3, 30_000);
    expect(turnsOf(await thread(conversationId))).toHaveLength(3);
  });

  it('a voice turn on the conversation waits for the chat answer, and a chat question for the voice answer', async () => {
    llm.script(SLOW, SLOW, SLOW);
    const conversationId = await newConversation(t.app, user.access);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/voice/session',
      headers: bearer(user.access),
      payload: { conversation_id: conversationId },
    });
    expect(res.statusCode, res.body).toBe(201);
    const voice = await connect(dataOf<{ socket_url: string }>(res).socket_url);
    const chat = await connect();
    send(chat, conversationId, 'Typed question?');
    await chat.next((f) => f.type === 'chunk');
    voice.send({ type: 'text.input', text: 'Spoken question?' });
    // Sent while the voice answer is being generated or spoken.
    await voice.next((f) => f.type === 'response.delta', 20_000);
    send(chat, conversationId, 'Typed again?');
    await voice.next((f: Frame) => f.type === 'response.complete', 60_000);
    await chat.next(() => doneCount(chat) === 2, 60_000);
    const turns = turnsOf(await thread(conversationId));
    expect(turns.map((turn) => turn.question.content)).toEqual([
      'Typed question?',
      'Spoken question?',
      'Typed again?',
    ]);
    expect(historyOf(llm.requests[1])[1]).toEqual({
      role: 'assistant',
      content: turns[0]?.answer.content,
    });
    expect(historyOf(llm.requests[2])[3]).toEqual({
      role: 'assistant',
      content: turns[1]?.answer.content,
    });
  });
});
