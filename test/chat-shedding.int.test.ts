import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, type TestUser } from './helpers/factories.js';
import { uploadNew, waitForJob } from './helpers/knowledge.js';
import { silence, speak } from './helpers/speech-audio.js';
import {
  ChatClient,
  listenLocal,
  newConversation,
  storedThread,
  type Frame,
} from './helpers/ws-client.js';

/**
 * Load shed, not queued into failure (issue 24 item 5): when the knowledge base cannot answer
 * every turn within the retrieval deadline, the turns it cannot serve are refused before anything
 * is stored (SERVICE_UNAVAILABLE, recoverable, with when to try again), and the turns it takes
 * are answered with their passages.
 */

const SEARCH_MS = 1500;
/** Searches wait for this too: the second test holds them to keep the gate full. */
let held: Promise<void> = Promise.resolve();

describe('a burst of chat turns on a slow knowledge base', () => {
  let t: TestApp;
  let user: TestUser;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp({
      backend: 'pglite',
      env: { CHAT_CONCURRENT_SEARCHES: '1', CHAT_MAX_ACTIVE_ANSWERS: '20' },
    });
    const admin = await createUser(t.app, t.deps, { admin: true });
    user = await createUser(t.app, t.deps);
    const doc = await uploadNew(t.app, admin.access, {
      file: 'Offer metformin as the first drug treatment for adults with type 2 diabetes.',
      title: 'Diabetes',
    });
    await waitForJob(t.app, admin.access, doc.job?.id ?? '', 'completed');
    // The real search, made slow: each one takes SEARCH_MS more, as on an overloaded engine.
    const search = t.deps.knowledge.search;
    const real = search.search.bind(search);
    search.search = async (...args) => {
      await sleep(SEARCH_MS);
      await held;
      return real(...args);
    };
    port = await listenLocal(t.app);
  });
  afterAll(async () => {
    await t.close();
  });

  const ask = (client: ChatClient, conversationId: string, ref: string) => {
    client.send({
      type: 'message_send',
      conversation_id: conversationId,
      content: 'What is the first drug for type 2 diabetes?',
      request_ref: ref,
    });
  };

  it('refuses what it cannot serve in time, and answers the rest with passages', async () => {
    const client = await ChatClient.connect(port, user.access);
    // One turn alone: the gate learns how long a search takes.
    const first = await newConversation(t.app, user.access);
    ask(client, first, 'first');
    await client.next((f) => f.type === 'message_done', 20_000);

    const conversations = await Promise.all(
      Array.from({ length: 6 }, () => newConversation(t.app, user.access)),
    );
    const burst = new Set(conversations);
    conversations.forEach((id, i) => {
      ask(client, id, `burst-${String(i)}`);
    });
    // About 1.5 s a search, one at a time, a 5 s deadline: three fit, the others are refused.
    const ended = new Map<string, Frame>();
    const deadline = Date.now() + 30_000;
    while (ended.size < conversations.length && Date.now() < deadline) {
      const frame = await client.next(
        (f) =>
          (f.type === 'message_done' &&
            burst.has(String(f.conversation_id)) &&
            !ended.has(String(f.conversation_id))) ||
          (f.type === 'error' &&
            String(f.request_ref).startsWith('burst-') &&
            !ended.has(String(f.request_ref))),
        30_000,
      );
      const key =
        frame.type === 'error' ? String(frame.request_ref) : String(frame.conversation_id);
      ended.set(key, frame);
    }
    const refused = [...ended.values()].filter((f) => f.type === 'error');
    const answered = [...ended.values()].filter((f) => f.type === 'message_done');
    expect(refused.length).toBeGreaterThan(0);
    expect(answered.length).toBeGreaterThan(0);
    expect(refused.length + answered.length).toBe(conversations.length);
    for (const frame of refused) {
      expect(frame).toMatchObject({ code: 'SERVICE_UNAVAILABLE', recoverable: true });
      expect(frame.retry_after_ms).toBeGreaterThan(0);
      expect(String(frame.message)).toMatch(/try again in \d+ s/);
    }
    // Every turn taken got its passages: cited, and no KB_TIMEOUT among the frames.
    for (const frame of answered) {
      const message = frame.message as { citations: unknown[] };
      expect(message.citations.length).toBeGreaterThan(0);
    }
    expect(client.frames.filter((f) => f.code === 'KB_TIMEOUT')).toEqual([]);
    // A refused turn left nothing behind: its conversation holds no message.
    const refusedRefs = new Set(refused.map((f) => String(f.request_ref)));
    for (const [i, id] of conversations.entries()) {
      const thread = await storedThread(t.app, user.access, id);
      expect(thread.length).toBe(refusedRefs.has(`burst-${String(i)}`) ? 0 : 2);
    }
    client.close();
  }, 90_000);

  it('refuses a spoken question too while the searches ahead would miss the deadline', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/voice/session',
      headers: bearer(user.access),
      payload: {},
    });
    const voice = dataOf<{ conversation_id: string; socket_url: string }>(res);
    const spoken = await ChatClient.connect(port, user.access, voice.socket_url);
    const chat = await ChatClient.connect(port, user.access);
    // One turn alone first (as in the test above): the gate learns how long a search takes.
    ask(chat, await newConversation(t.app, user.access), 'pace');
    await chat.next((f) => f.type === 'message_done', 20_000);
    let release: () => void = () => undefined;
    held = new Promise((resolve) => {
      release = resolve;
    });
    try {
      // Made before the audio is sent: once the utterance ends, only the sends race recognition.
      const conversations = await Promise.all(
        Array.from({ length: 5 }, () => newConversation(t.app, user.access)),
      );
      const question = await speak('what is the first drug treatment for type two diabetes');
      const pcm = Buffer.concat([silence(600), question, silence(1200)]);
      for (let at = 0; at < pcm.length; at += 3200) {
        spoken.send({ type: 'audio.input', audio: pcm.subarray(at, at + 3200).toString('base64') });
      }
      // The utterance has ended and is being recognised: fill the gate with chat turns now.
      await spoken.next((f) => f.type === 'voice.state' && f.state === 'PROCESSING', 30_000);
      conversations.forEach((id, i) => {
        ask(chat, id, `hold-${String(i)}`);
      });
      const refused = await spoken.next((f) => f.type === 'error', 30_000);
      expect(refused, JSON.stringify(refused)).toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        recoverable: true,
      });
      expect(String(refused.message)).toMatch(/try again in \d+ s/);
      // Nothing of the refused spoken turn was stored.
      expect(await storedThread(t.app, user.access, voice.conversation_id)).toEqual([]);
    } finally {
      release();
      held = Promise.resolve();
      spoken.close();
      chat.close();
    }
  }, 90_000);
});
