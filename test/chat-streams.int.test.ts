import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiLlmProvider } from '../src/providers/llm/openai.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, type TestUser } from './helpers/factories.js';
import { OpenAiChatServer } from './helpers/openai-chat-server.js';
import { ChatClient, listenLocal, newConversation, type Frame } from './helpers/ws-client.js';

/**
 * Answers outlive their sockets (DECISIONS 4): cancel, resume after a drop, and the socket limits,
 * with the OpenAI-compatible provider against a local server replaying a recorded stream slowly,
 * on both answer-stream stores (Redis Streams with PostgreSQL; in-process with PGlite).
 */

const SLOW = { kind: 'sse', fixture: 'text-with-usage.sse', delayMs: 60 } as const;

interface Message {
  id: string;
  content: string;
  interrupted: boolean;
}

const chunks = (frames: Frame[], messageId: string) =>
  frames.filter((f) => f.type === 'chunk' && f.message_id === messageId);

describe.each(['postgres', 'pglite'] as const)('answers outlive sockets (%s)', (backend) => {
  const llm = new OpenAiChatServer();
  let t: TestApp;
  let port: number;
  let user: TestUser;
  const clients: ChatClient[] = [];
  const connect = async (token = user.access) => {
    const client = await ChatClient.connect(port, token);
    clients.push(client);
    return client;
  };
  const conversation = async () => {
    return await newConversation(t.app, user.access);
  };
  const stored = async (conversationId: string) => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/conversations/${conversationId}/messages`,
      headers: bearer(user.access),
    });
    return dataOf<{ items: Message[] }>(res).items;
  };

  beforeAll(async () => {
    await llm.start();
    t = await createTestApp({
      backend,
      llm: new OpenAiLlmProvider({ baseUrl: llm.baseUrl, model: 'gpt-4o-mini', timeoutMs: 2000 }),
    });
    user = await createUser(t.app, t.deps);
    port = await listenLocal(t.app);
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await t.close();
    await llm.stop();
  });

  it('a dropped socket does not stop the answer; another socket resumes after a given chunk', async () => {
    llm.script(SLOW);
    const conversationId = await conversation();
    const a = await connect();
    a.send({ type: 'message_send', conversation_id: conversationId, content: 'Metformin?' });
    const second = await a.next((f) => f.type === 'chunk' && f.index === 1);
    const messageId = String(second.message_id);
    a.close();
    const b = await connect();
    b.send({ type: 'message_resume', message_id: messageId, after_index: 1 });
    const done = await b.next((f) => f.type === 'message_done');
    const resumed = chunks(b.frames, messageId);
    expect(resumed[0]?.index).toBe(2);
    resumed.forEach((c, i) => {
      expect(c.index).toBe(i + 2);
    });
    const first = chunks(a.frames, messageId).filter((c) => Number(c.index) <= 1);
    const text = [...first, ...resumed].map((c) => c.delta).join('');
    const message = done.message as Message;
    expect(text).toBe(message.content);
    expect(message.content).toContain('500 mg once daily');
    expect(message.interrupted).toBe(false);
    expect((await stored(conversationId)).map((m) => m.id)).toContain(messageId);
  });

  it('a socket that never saw the answer replays it whole', async () => {
    llm.script(SLOW);
    const conversationId = await conversation();
    const a = await connect();
    a.send({ type: 'message_send', conversation_id: conversationId, content: 'Metformin?' });
    const first = await a.next((f) => f.type === 'chunk');
    const b = await connect();
    b.send({ type: 'message_resume', message_id: first.message_id });
    const done = await b.next((f) => f.type === 'message_done');
    const replayed = chunks(b.frames, String(first.message_id));
    expect(replayed.map((c) => c.index)).toEqual(replayed.map((_c, i) => i));
    expect(replayed.map((c) => c.delta).join('')).toBe((done.message as Message).content);
  });

  it('resending a client_message_id while its answer runs follows that answer, starting nothing', async () => {
    llm.script(SLOW);
    const conversationId = await conversation();
    const a = await connect();
    const send = {
      type: 'message_send',
      conversation_id: conversationId,
      content: 'Metformin?',
      client_message_id: 'tab-7',
    };
    a.send(send);
    const first = await a.next((f) => f.type === 'chunk');
    a.close();
    const b = await connect();
    b.send(send);
    const done = await b.next((f) => f.type === 'message_done');
    expect((done.message as Message).id).toBe(first.message_id);
    expect(llm.requests).toHaveLength(1);
    expect(await stored(conversationId)).toHaveLength(2);
  });

  it('runs the tools the model asks for, feeds their results back, and stores the records', async () => {
    const TOOLS = { kind: 'sse', fixture: 'tool-calls-parallel.sse' } as const;
    llm.script(TOOLS, { kind: 'sse', fixture: 'text-with-usage.sse' });
    const conversationId = await conversation();
    const a = await connect();
    a.send({ type: 'message_send', conversation_id: conversationId, content: 'Metformin?' });
    const done = await a.next((f) => f.type === 'message_done');
    const results = a.ofType('tool_result').map((f) => f.call as Record<string, unknown>);
    expect(a.ofType('tool_call')).toHaveLength(2);
    expect(results.map((c) => c.name)).toEqual([
      'search_knowledge_base',
      'get_patient_medications',
    ]);
    expect(results[0]).toMatchObject({
      arguments: { query: 'metformin renal impairment' },
      error: null,
    });
    expect(results[1]).toMatchObject({ result: null, error: { code: 'TOOL_ERROR' } });
    expect((done.message as { toolCalls: unknown[] }).toolCalls).toEqual(results);
    // The second request carries the assistant's calls and one tool message per call.
    const second = llm.requests[1]?.body.messages as { role: string; tool_call_id?: string }[];
    expect(second.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(
      results.map((c) => c.id),
    );
  });

  it('tool arguments the model garbled are refused without running the tool', async () => {
    llm.script(
      { kind: 'sse', fixture: 'tool-call-invalid-json.sse' },
      { kind: 'sse', fixture: 'text-with-usage.sse' },
    );
    const conversationId = await conversation();
    const a = await connect();
    a.send({ type: 'message_send', conversation_id: conversationId, content: 'Metformin?' });
    await a.next((f) => f.type === 'message_done');
    const [result] = a.ofType('tool_result').map((f) => f.call as Record<string, unknown>);
    expect(result).toMatchObject({
      result: null,
      error: { code: 'TOOL_ERROR', message: 'the arguments were not valid JSON' },
    });
  });

  it('stops offering tools after five rounds', async () => {
    const TOOLS = { kind: 'sse', fixture: 'tool-calls-parallel.sse' } as const;
    llm.script(TOOLS, TOOLS, TOOLS, TOOLS, TOOLS, TOOLS, {
      kind: 'sse',
      fixture: 'text-with-usage.sse',
    });
    const conversationId = await conversation();
    const a = await connect();
    a.send({ type: 'message_send', conversation_id: conversationId, content: 'Metformin?' });
    const done = await a.next((f) => f.type === 'message_done');
    expect(llm.requests).toHaveLength(6);
    expect(llm.requests.slice(0, 5).every((r) => Array.isArray(r.body.tools))).toBe(true);
    expect(llm.requests[5]?.body.tools).toBeUndefined();
    expect((done.message as { toolCalls: unknown[] }).toolCalls).toHaveLength(10);
  });

  it('message_cancel stops the answer; the part so far is stored as interrupted', async () => {
    llm.script(SLOW);
    const conversationId = await conversation();
    const a = await connect();
    a.send({ type: 'message_send', conversation_id: conversationId, content: 'Metformin?' });
    const first = await a.next((f) => f.type === 'chunk');
    a.send({ type: 'message_cancel', message_id: first.message_id });
    const done = await a.next((f) => f.type === 'message_done');
    const message = done.message as Message;
    expect(message.interrupted).toBe(true);
    expect(message.content.length).toBeGreaterThan(0);
    expect(message.content).not.toContain('[2]');
    await llm.requests.at(-1)?.closed;
    const saved = (await stored(conversationId)).find((m) => m.id === message.id);
    expect(saved).toMatchObject({ interrupted: true, content: message.content });
    await a.roundTrip();
  });

  it('the model stalling ends the turn with LLM_ERROR; the partial answer is stored and the socket usable', async () => {
    llm.script({ kind: 'sse', fixture: 'text-with-usage.sse', events: 3, then: 'hang' });
    const conversationId = await conversation();
    const a = await connect();
    a.send({ type: 'message_send', conversation_id: conversationId, content: 'Metformin?' });
    const error = await a.next((f) => f.type === 'error', 15_000);
    expect(error).toMatchObject({ code: 'LLM_ERROR' });
    const done = await a.next((f) => f.type === 'message_done', 5000);
    expect(done.message).toMatchObject({ interrupted: true });
    expect((done.message as Message).content).toContain('For adults');
    await a.roundTrip();
  }, 20_000);
});

describe('shutdown', () => {
  it('sockets are told to go (1001); an answer still running is stored before the process ends', async () => {
    const llm = new OpenAiChatServer();
    await llm.start();
    const t = await createTestApp({
      backend: 'pglite',
      llm: new OpenAiLlmProvider({ baseUrl: llm.baseUrl, model: 'gpt-4o-mini', timeoutMs: 2000 }),
      env: { SHUTDOWN_TIMEOUT_MS: '2000' },
    });
    try {
      const user = await createUser(t.app, t.deps);
      const port = await listenLocal(t.app);
      const conversationId = await newConversation(t.app, user.access);
      // Far slower than the deadline: the answer is cancelled and stored as interrupted.
      llm.script({ kind: 'sse', fixture: 'text-with-usage.sse', delayMs: 400 });
      const client = await ChatClient.connect(port, user.access);
      client.send({ type: 'message_send', conversation_id: conversationId, content: 'Metformin?' });
      const chunk = await client.next((f) => f.type === 'chunk');
      await t.app.close();
      expect((await client.closed).code).toBe(1001);
      await t.deps.chat.close(2000);
      const answer = await t.deps.messages.findOwned(user.id, String(chunk.message_id));
      expect(answer).toMatchObject({ role: 'assistant', interrupted: true });
    } finally {
      await t.close();
      await llm.stop();
    }
  });
});

describe('socket limits', () => {
  const llm = new OpenAiChatServer();
  let t: TestApp;
  let port: number;
  let user: TestUser;
  const connect = (token = user.access) => ChatClient.connect(port, token);

  beforeAll(async () => {
    await llm.start();
    // The send rate is counted per clock minute: the service's clock starts this block at the
    // start of a minute, so the four sends of the first test fall in one window however slowly
    // the machine runs them (CI once crossed a minute between the third and the fourth).
    const shift = Date.now() % 60_000;
    t = await createTestApp({
      backend: 'pglite',
      now: () => new Date(Date.now() - shift),
      llm: new OpenAiLlmProvider({ baseUrl: llm.baseUrl, model: 'gpt-4o-mini', timeoutMs: 2000 }),
      env: {
        CHAT_SENDS_PER_MINUTE: '3',
        CHAT_MAX_ACTIVE_ANSWERS: '1',
        WS_MAX_SOCKETS_PER_USER: '3',
        WS_IDLE_TIMEOUT_MS: '1500',
        WS_SEND_BUFFER_BYTES: String(64 * 1024),
      },
    });
    user = await createUser(t.app, t.deps);
    port = await listenLocal(t.app);
  });
  afterAll(async () => {
    await t.close();
    await llm.stop();
  });

  it('one answer at a time, then the send rate: RATE_LIMITED frames, the socket stays open', async () => {
    const conversationId = await newConversation(t.app, user.access);
    const a = await connect();
    const send = (ref: string) => {
      a.send({
        type: 'message_send',
        conversation_id: conversationId,
        content: 'Hi',
        request_ref: ref,
      });
    };
    llm.script(SLOW, { kind: 'sse', fixture: 'text-with-usage.sse' });
    send('one');
    await a.next((f) => f.type === 'chunk');
    send('two');
    expect(await a.next((f) => f.type === 'error')).toMatchObject({
      code: 'RATE_LIMITED',
      request_ref: 'two',
    });
    await a.next((f) => f.type === 'message_done');
    send('three');
    await a.next((f) => f.type === 'message_done' && a.ofType('message_done').length === 2);
    send('four');
    const limited = await a.next((f) => f.type === 'error' && f.request_ref === 'four');
    expect(limited).toMatchObject({ code: 'RATE_LIMITED' });
    expect(String(limited.message)).toMatch(/a minute/);
    await a.roundTrip();
    a.close();
  });

  it('a user may hold only so many sockets', async () => {
    const other = await createUser(t.app, t.deps);
    const open = [
      await connect(other.access),
      await connect(other.access),
      await connect(other.access),
    ];
    const extra = await ChatClient.open(port, other.access);
    expect((await extra.closed).code).toBe(4429);
    expect(extra.frames.at(-1)).toMatchObject({ type: 'error', code: 'RATE_LIMITED' });
    open[0]?.close();
    await open[0]?.closed;
    const again = await connect(other.access);
    for (const c of [...open, again]) c.close();
  });

  it('an idle socket closes; one that pings stays', async () => {
    const idle = await connect();
    const busy = await connect();
    const timer = setInterval(() => {
      busy.send({ type: 'ping' });
    }, 300);
    try {
      expect((await idle.closed).code).toBe(4408);
      expect(busy.ws.readyState).toBe(busy.ws.OPEN);
    } finally {
      clearInterval(timer);
      busy.close();
    }
  });

  it('a client that stops reading is closed with 1013 instead of growing the server’s memory', async () => {
    const slow = await connect();
    const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    const closes = async () =>
      (await t.deps.metrics.wsSlowReaderCloses.get()).values.reduce((n, v) => n + v.value, 0);
    const before = await closes();
    socket.pause();
    // Pongs pile up: first in the kernel's socket buffers, then in the server's send buffer. The
    // client reads again as soon as the server gives up on it: a client still silent 5 s after the
    // close is cut off without one (1006), however loaded the machine running the test.
    const ts = 'x'.repeat(64);
    for (let i = 0; i < 300_000 && slow.ws.readyState === slow.ws.OPEN; i++) {
      slow.send({ type: 'ping', ts });
      if (i % 200 === 0) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        if ((await closes()) > before) break;
      }
    }
    expect(await closes()).toBe(before + 1);
    socket.resume();
    expect((await slow.closed).code).toBe(1013);
  });
});
