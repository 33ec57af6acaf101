import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, type TestUser } from './helpers/factories.js';
import { ChatClient, listenLocal } from './helpers/ws-client.js';

/**
 * Two instances on one database and one Redis: a voice session made on one is opened on the
 * other, with its settings and conversation, and the turn lands in that conversation.
 */
describe('voice sessions across instances', () => {
  let one: TestApp;
  let two: TestApp;
  let portTwo: number;
  let user: TestUser;

  beforeAll(async () => {
    one = await createTestApp();
    two = await createTestApp({
      shared: {
        databaseUrl: one.deps.config.databaseUrl ?? '',
        redisPrefix: one.deps.config.redisPrefix,
      },
    });
    user = await createUser(one.app, one.deps);
    portTwo = await listenLocal(two.app);
  });
  afterAll(async () => {
    await two.close();
    await one.close();
  });

  it('opens on the second instance a session made on the first', async () => {
    const res = await one.app.inject({
      method: 'POST',
      url: '/api/voice/session',
      headers: bearer(user.access),
      payload: { barge_in: false, turn_detection: { silence_ms: 700 } },
    });
    expect(res.statusCode, res.body).toBe(201);
    const session = dataOf<{ session_id: string; conversation_id: string; socket_url: string }>(
      res,
    );
    const client = await ChatClient.connect(portTwo, user.access, session.socket_url);
    expect(client.frames[0]).toMatchObject({
      type: 'connected',
      session_id: session.session_id,
      conversation_id: session.conversation_id,
    });
    client.send({ type: 'session.update', voice: 'rms' });
    const updated = await client.next((f) => f.type === 'session.updated');
    expect(updated.session).toMatchObject({
      barge_in: false,
      voice: 'rms',
      turn_detection: { silence_ms: 700 },
    });
    client.send({ type: 'text.input', text: 'What is the BMI for 80 kg and 1.80 m?' });
    const complete = await client.next((f) => f.type === 'response.complete', 30_000);
    const thread = await one.app.inject({
      method: 'GET',
      url: `/conversations/${session.conversation_id}/messages`,
      headers: bearer(user.access),
    });
    const items = dataOf<{ items: { id: string }[] }>(thread).items;
    expect(items.map((m) => m.id)).toContain(complete.message_id);
    client.close();
    await client.closed;
  });
});
