import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiLlmProvider } from '../src/providers/llm/openai.js';
import {
  createSecondInstance,
  createTestApp,
  TEST_JWT_SECRET,
  type TestApp,
} from './helpers/app.js';
import { storedThread } from './helpers/chat-thread.js';
import { REDIS_URL } from './helpers/env.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { OpenAiChatServer } from './helpers/openai-chat-server.js';
import { freePort, spawnTsx, waitForHttp, type Spawned } from './helpers/process.js';
import { PrivateRedis } from './helpers/redis-server.js';
import { TcpProxy } from './helpers/tcp-proxy.js';
import { ChatClient, listenLocal, newConversation, type Frame } from './helpers/ws-client.js';

/**
 * The per-user answer limit and `message_cancel` hold across instances when Redis misbehaves
 * (issue 22 item 8): a cancel published while the answering instance's subscriber is away, Redis
 * restarted empty in the middle of answers, and an instance killed while it answers.
 */

const FIXTURE = 'text-with-usage.sse';
const SLOW = { kind: 'sse', fixture: FIXTURE, delayMs: 60 } as const;
/** Long enough to do things to Redis while it is generated (11 events). */
const LONG = { kind: 'sse', fixture: FIXTURE, delayMs: 1200 } as const;

const model = (llm: OpenAiChatServer) =>
  new OpenAiLlmProvider({ baseUrl: llm.baseUrl, model: 'gpt-4o-mini', timeoutMs: 5000 });

const send = (client: ChatClient, conversationId: string, ref: string) => {
  client.ask(conversationId, 'Metformin?', { request_ref: ref });
};

const doneOf = (messageId: unknown) => (f: Frame) =>
  f.type === 'message_done' && (f.message as { id: string }).id === messageId;

const answersStarted = (client: ChatClient) =>
  new Set(client.ofType('chunk').map((f) => f.message_id)).size;

describe('a cancel published while the answering instance’s subscriber is away', () => {
  const llm = new OpenAiChatServer();
  let proxy: TcpProxy;
  let one: TestApp;
  let two: TestApp;
  let user: TestUser;
  const ports: number[] = [];

  beforeAll(async () => {
    await llm.start();
    // Instance one reaches Redis through a proxy the test can cut; instance two directly.
    proxy = await TcpProxy.start(Number(new URL(REDIS_URL).port || 6379));
    one = await createTestApp({
      llm: model(llm),
      env: { REDIS_URL: `redis://127.0.0.1:${String(proxy.port)}` },
    });
    two = await createSecondInstance(one, { llm: model(llm) });
    for (const t of [one, two]) ports.push(await listenLocal(t.app));
    user = await createUser(two.app, two.deps);
  });
  afterAll(async () => {
    await proxy.restore();
    await two.close();
    await one.close();
    await proxy.close();
    await llm.stop();
  });

  it('is found in Redis when the subscriber is back, and stops the answer', async () => {
    llm.script(LONG);
    const conversationId = await newConversation(two.app, user.access);
    const a = await ChatClient.connect(ports[0] ?? 0, user.access);
    const b = await ChatClient.connect(ports[1] ?? 0, user.access);
    send(a, conversationId, 'long');
    const chunk = await a.next((f) => f.type === 'chunk');
    await proxy.cut();
    b.send({ type: 'message_cancel', message_id: chunk.message_id });
    // Instance two stored and published the cancel; instance one heard nothing of it.
    await b.roundTrip();
    await sleep(500);
    await proxy.restore();
    const done = await a.next(doneOf(chunk.message_id), 10_000);
    expect(done.message).toMatchObject({ interrupted: true });
    // Stopped well before the model's 11 events (1.2 s apart) were read.
    expect(a.ofType('chunk').length).toBeLessThan(6);
    expect(await b.next(doneOf(chunk.message_id), 10_000)).toEqual(done);
    a.close();
    b.close();
  });

  it('with Redis out of reach, a cancel on the answer’s own instance stops it and a send is refused', async () => {
    llm.script(LONG);
    const conversationId = await newConversation(two.app, user.access);
    const a = await ChatClient.connect(ports[0] ?? 0, user.access);
    send(a, conversationId, 'long');
    const chunk = await a.next((f) => f.type === 'chunk');
    await proxy.cut();
    try {
      a.send({ type: 'message_cancel', message_id: chunk.message_id });
      const done = await a.next(doneOf(chunk.message_id), 5000);
      expect(done.message).toMatchObject({ interrupted: true });
      send(a, conversationId, 'refused');
      expect(await a.next((f) => f.type === 'error' && f.request_ref === 'refused')).toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
      });
    } finally {
      await proxy.restore();
    }
    a.close();
  });
});

describe('Redis restarted, empty, while answers are generated', () => {
  const llm = new OpenAiChatServer();
  let redis: PrivateRedis;
  let raw: Redis;
  let one: TestApp;
  let two: TestApp;
  let user: TestUser;
  const ports: number[] = [];
  const env = () => ({ REDIS_URL: redis.url, CHAT_ANSWER_LEASE_MS: '6000' });

  beforeAll(async () => {
    await llm.start();
    redis = await PrivateRedis.start();
    raw = redis.client();
    one = await createTestApp({ llm: model(llm), env: env() });
    two = await createSecondInstance(one, { llm: model(llm), env: env() });
    for (const t of [one, two]) ports.push(await listenLocal(t.app));
    user = await createUser(one.app, one.deps);
  });
  afterAll(async () => {
    raw.disconnect();
    await two.close();
    await one.close();
    await redis.stop();
    await llm.stop();
  });

  it('the answers take their slots back: the limit and cancel still hold', async () => {
    llm.script(LONG, LONG, LONG, SLOW);
    const a = await ChatClient.connect(ports[0] ?? 0, user.access);
    const b = await ChatClient.connect(ports[1] ?? 0, user.access);
    send(a, await newConversation(one.app, user.access), 'one');
    send(a, await newConversation(one.app, user.access), 'two');
    send(b, await newConversation(one.app, user.access), 'three');
    await a.next(() => answersStarted(a) === 2);
    await b.next((f) => f.type === 'chunk');
    const slots = `${one.deps.config.redisPrefix}chat:active:${user.id}`;
    expect(await raw.zcard(slots)).toBe(3);

    await raw.set('marker', 'before the restart');
    await redis.restart();
    await raw.ping();
    // It came back empty.
    expect(await raw.get('marker')).toBeNull();
    // Each instance renews its answers' slots when its subscriber reconnects (at the latest a
    // third of CHAT_ANSWER_LEASE_MS later).
    for (let i = 0; (await raw.zcard(slots)) < 3; i++) {
      expect(i, 'slots taken back within 4 s').toBeLessThan(40);
      await sleep(100);
    }
    send(b, await newConversation(one.app, user.access), 'four');
    expect(await b.next((f) => f.type === 'error' && f.request_ref === 'four')).toMatchObject({
      code: 'RATE_LIMITED',
    });

    // A cancel from instance two reaches an answer generating on instance one.
    const onOne = a.ofType('chunk')[0]?.message_id;
    b.send({ type: 'message_cancel', message_id: onOne });
    const done = await b.next(doneOf(onOne), 10_000);
    expect(done.message).toMatchObject({ interrupted: true });
    await a.next(doneOf(onOne), 10_000);
    // Its slot is free again.
    const before = new Set([...a.ofType('chunk'), ...b.ofType('chunk')].map((f) => f.message_id));
    send(b, await newConversation(one.app, user.access), 'five');
    const fifth = await b.next((f) => f.type === 'chunk' && !before.has(f.message_id), 10_000);
    expect(fifth.message_id).toBeTypeOf('string');
    a.close();
    b.close();
  });
});

describe('an instance killed while it answers', () => {
  const llm = new OpenAiChatServer();
  const LEASE_MS = 3000;
  let one: TestApp;
  let child: Spawned | undefined;
  let childPort: number;
  let dataDir: string;
  let user: TestUser;
  let port: number;
  const clients: ChatClient[] = [];

  beforeAll(async () => {
    await llm.start();
    one = await createTestApp({
      llm: model(llm),
      env: { CHAT_ANSWER_LEASE_MS: String(LEASE_MS) },
    });
    port = await listenLocal(one.app);
    dataDir = await mkdtemp(path.join(tmpdir(), 'mas-chat-crash-'));
    childPort = await freePort();
    child = spawnTsx('src/main.ts', [], {
      DATABASE_URL: one.deps.config.databaseUrl ?? '',
      REDIS_URL,
      REDIS_PREFIX: one.deps.config.redisPrefix,
      JWT_SECRET: TEST_JWT_SECRET,
      DATA_DIR: dataDir,
      PORT: String(childPort),
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      LLM_PROVIDER: 'openai',
      OPENAI_BASE_URL: llm.baseUrl,
      LLM_MODEL: 'gpt-4o-mini',
      CHAT_ANSWER_LEASE_MS: String(LEASE_MS),
    });
    await waitForHttp(childPort, '/health', 90_000);
    user = await createUser(one.app, one.deps);
  }, 120_000);
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  afterAll(async () => {
    if (child?.child.exitCode === null) child.child.kill('SIGKILL');
    await one.close();
    await llm.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('frees its answer slots and its turns on their branches within CHAT_ANSWER_LEASE_MS', async () => {
    const HANG = { kind: 'sse', fixture: FIXTURE, events: 3, then: 'hang' } as const;
    llm.script(HANG, HANG, HANG, SLOW, SLOW);
    const conversations = [
      await newConversation(one.app, user.access),
      await newConversation(one.app, user.access),
      await newConversation(one.app, user.access),
    ];
    const doomed = await ChatClient.connect(childPort, user.access);
    clients.push(doomed);
    conversations.forEach((c, i) => {
      send(doomed, c, `doomed-${String(i)}`);
    });
    await doomed.next(() => answersStarted(doomed) === 3, 20_000);
    const exited = child?.exited;
    child?.child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();

    const a = await ChatClient.connect(port, user.access);
    clients.push(a);
    const elsewhere = await newConversation(one.app, user.access);
    // The dead instance's three answers still count until their slots expire.
    for (let n = 0; ; n++) {
      send(a, elsewhere, `try-${String(n)}`);
      const f = await a.next(
        (x) => (x.type === 'error' && x.request_ref === `try-${String(n)}`) || x.type === 'chunk',
      );
      if (f.type === 'chunk') {
        expect(n, 'the first try is refused').toBeGreaterThan(0);
        break;
      }
      expect(f).toMatchObject({ code: 'RATE_LIMITED' });
      // Freed within the lease; 2 s more for this test's own round trips on a loaded machine.
      expect(Date.now() - killedAt, 'freed within the lease').toBeLessThan(LEASE_MS + 2000);
      await sleep(300);
    }
    // The dead instance's question on the first conversation had its turn; the next goes in.
    const first = conversations[0] ?? '';
    send(a, first, 'after');
    await a.next((f) => f.type === 'message_done' && f.conversation_id === first, 20_000);
    const thread = await storedThread(one.app, user.access, first);
    expect(thread.map((m) => m.role)).toEqual(['user', 'user', 'assistant']);
    expect(thread[2]?.parentMessageId).toBe(thread[1]?.id);
  });
});
