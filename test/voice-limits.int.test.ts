import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, type TestUser } from './helpers/factories.js';
import { multipartBody, uploadNew, waitForJob } from './helpers/knowledge.js';
import { silence, speak, trimSilence } from './helpers/speech-audio.js';
import { ChatClient, listenLocal } from './helpers/ws-client.js';

/**
 * The voice pipeline's bounds (issue 11 item 8) with small settings, and the recognizer's
 * knowledge-base model being built again when the knowledge base changes (item 3).
 */

const PATH = '/api/voice/pipeline-ws';
const FRAME = 3200;

/** Sends PCM as the client would, one 100 ms `audio.input` frame after another. */
function sendAudio(client: ChatClient, pcm: Buffer): void {
  for (let at = 0; at < pcm.length; at += FRAME) {
    client.send({ type: 'audio.input', audio: pcm.subarray(at, at + FRAME).toString('base64') });
  }
}

describe('voice limits and the knowledge-base model', () => {
  let t: TestApp;
  let port: number;
  let admin: TestUser;
  let user: TestUser;
  const clients: ChatClient[] = [];
  const connect = async () => {
    const client = await ChatClient.connect(port, user.access, PATH);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        VOICE_MAX_UTTERANCE_MS: '1500',
        VOICE_IDLE_TIMEOUT_MS: '1500',
        // Latency added to the model by one test (chaos is otherwise off: no fault is set).
        CHAOS_ENABLED: 'true',
      },
    });
    admin = await createUser(t.app, t.deps, { admin: true });
    user = await createUser(t.app, t.deps);
    port = await listenLocal(t.app);
  });
  afterEach(async () => {
    const open = clients.splice(0);
    for (const c of open) c.close();
    await Promise.all(open.map((c) => c.closed));
  });
  afterAll(async () => {
    await t.close();
  });

  it('ends an utterance at the longest allowed, without waiting for silence', async () => {
    const client = await connect();
    const long = await speak(
      'the patient has had a cough and a fever for three days and now feels short of breath',
    );
    sendAudio(client, long);
    const processing = await client.next(
      (f) => f.type === 'voice.state' && f.state === 'PROCESSING',
      20_000,
    );
    expect(processing.reason).toBe('commit');
    const transcript = await client.next((f) => f.type === 'transcript.complete', 20_000);
    // 1.5 s of speech: the start of the sentence, not all of it.
    const words = String(transcript.text).split(/\s+/).filter(Boolean);
    expect(words.length).toBeGreaterThan(0);
    expect(words.length).toBeLessThan(12);
  });

  it('keeps a socket open while its answer takes longer than the idle time', async () => {
    t.deps.chaos.set('llm', { latency_ms: 4000, error_rate: 0 });
    try {
      const client = await connect();
      const audio = Buffer.concat([await speak('what is metformin'), silence(1200)]);
      sendAudio(client, audio);
      // Nothing more is sent: 4 s in PROCESSING are the server's wait, not the client's silence.
      const done = await client.next((f) => f.type === 'response.complete', 20_000);
      expect(done.interrupted).toBe(false);
      expect(client.frames.filter((f) => f.type === 'error')).toEqual([]);
    } finally {
      t.deps.chaos.reset();
    }
  });

  it('closes a socket that sends nothing for the idle time (4408)', async () => {
    const client = await connect();
    client.send({ type: 'audio.input', audio: silence(100).toString('base64') });
    const closed = await client.closed;
    expect(closed.code).toBe(4408);
  });

  it('builds the recognizer a model of the knowledge base, and again when a document is indexed', async () => {
    await connect(); // a voice socket creates the recognizer
    const first = await uploadNew(t.app, admin.access, {
      file: 'Offer metformin as the first drug treatment for type 2 diabetes.',
      title: 'Diabetes',
    });
    await waitForJob(t.app, admin.access, first.job?.id ?? '', 'completed');
    await t.deps.voice.refreshKbModel();
    const built = t.deps.voice.kbModel();
    expect(built?.chunks).toBe(1);
    expect(built?.ngrams?.[0]).toBeGreaterThan(5);
    await t.deps.voice.refreshKbModel();
    expect(t.deps.voice.kbModel()?.builtAt).toBe(built?.builtAt);
    await sleep(5);
    const second = await uploadNew(t.app, admin.access, {
      file: 'Check the blood pressure of every adult with chronic kidney disease at each visit.',
      title: 'Kidney',
    });
    await waitForJob(t.app, admin.access, second.job?.id ?? '', 'completed');
    await t.deps.voice.refreshKbModel();
    const rebuilt = t.deps.voice.kbModel();
    expect(rebuilt?.chunks).toBe(2);
    expect(rebuilt?.builtAt).not.toBe(built?.builtAt);
    expect(rebuilt?.ngrams?.[0]).toBeGreaterThan(built?.ngrams?.[0] ?? 0);
    // The current model's file stays (a decoder replacing a crashed one loads it); the one it
    // replaced is gone.
    const voiceDir = path.join(t.deps.config.dataDir, 'voice');
    expect((await readdir(voiceDir)).filter((f) => f.endsWith('.arpa'))).toHaveLength(1);
    // "metformin" is not in the recognizer's dictionary: the model brings its pronunciation.
    expect(built?.addedWords).toBeGreaterThan(0);
    const { payload, contentType } = multipartBody([
      { name: 'file', filename: 'q.pcm', content: trimSilence(await speak('offer metformin')) },
    ]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/voice/audio',
      headers: { ...bearer(user.access), 'content-type': contentType },
      payload,
    });
    expect(dataOf<{ transcript: string }>(res).transcript).toContain('metformin');
  });
});
