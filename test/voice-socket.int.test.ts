import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { heardText } from '../src/modules/voice/heard.js';
import { AsyncQueue } from '../src/platform/async-queue.js';
import { speechSplitter } from '../src/modules/voice/sentences.js';
import { createTts } from '../src/providers/tts/index.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, type TestUser } from './helpers/factories.js';
import { uploadNew, waitForJob } from './helpers/knowledge.js';
import { noise, silence, speak, tone } from './helpers/speech-audio.js';
import { ChatClient, listenLocal, type Frame } from './helpers/ws-client.js';

/**
 * The voice socket (DECISIONS 5) through a real client against a listening server, with the
 * offline providers: Silero VAD, PocketSphinx, the extractive model over a small knowledge base,
 * and Flite. Questions are spoken by Flite into 16 kHz PCM16 and streamed as `audio.input`.
 */

const GUIDE = [
  'Metformin in type 2 diabetes',
  '',
  'Offer metformin as the first drug treatment for adults with type 2 diabetes. Start metformin at',
  '500 mg once daily with the evening meal and increase the dose slowly as tolerated. Do not start',
  'metformin when the eGFR is below 30. Review the dose of metformin when the eGFR falls below 45.',
  'Explain that metformin can cause stomach upset and diarrhoea, which usually settle within weeks.',
].join('\n');

const PATH = '/api/voice/pipeline-ws';
/** 100 ms of PCM16 at 16 kHz. */
const FRAME = 3200;

interface Message {
  id: string;
  role: string;
  content: string;
  interrupted: boolean;
}

/** The answer's sentences as the pipeline speaks them, each with its audio's duration. */
async function timedSentences(text: string) {
  const splitter = speechSplitter();
  const sentences = [...splitter.push(text), ...splitter.flush()];
  const tts = createTts({ provider: 'local', timeoutMs: 10_000 });
  const ms = sentences.map(() => 0);
  const input = new AsyncQueue<string>();
  for (const s of sentences) input.push(s);
  input.end();
  const options = { signal: new AbortController().signal, sampleRate: 16_000 };
  for await (const chunk of tts.synthesize(input, options)) {
    ms[chunk.sentence] = (ms[chunk.sentence] ?? 0) + chunk.pcm.length / 32;
  }
  await tts.close();
  return sentences.map((s, i) => ({ text: s, ms: ms[i] ?? 0 }));
}

describe('voice socket', () => {
  let t: TestApp;
  let port: number;
  let user: TestUser;
  let other: TestUser;
  const clients: ChatClient[] = [];
  const connect = async (token = user.access, path = PATH) => {
    const client = await ChatClient.connect(port, token, path);
    clients.push(client);
    return client;
  };
  /** Sends `pcm` as audio.input frames of 100 ms, `paceMs` apart (0: as fast as possible). */
  const stream = async (client: ChatClient, pcm: Buffer, paceMs = 0) => {
    for (let at = 0; at < pcm.length; at += FRAME) {
      client.send({ type: 'audio.input', audio: pcm.subarray(at, at + FRAME).toString('base64') });
      if (paceMs > 0) await sleep(paceMs);
    }
  };
  const states = (client: ChatClient, from = 0) =>
    client.frames
      .slice(from)
      .filter((f) => f.type === 'voice.state')
      .map((f) => f.state);
  const thread = async (conversationId: string, token = user.access) => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/conversations/${conversationId}/messages`,
      headers: bearer(token),
    });
    expect(res.statusCode, res.body).toBe(200);
    return dataOf<{ items: Message[] }>(res).items;
  };
  const session = async (body: Record<string, unknown> = {}, token = user.access) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/voice/session',
      headers: bearer(token),
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(201);
    return dataOf<{ session_id: string; conversation_id: string; socket_url: string }>(res);
  };

  /** Every log line, at debug level: none may carry a transcript, an answer or a token. */
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
    const doc = await uploadNew(t.app, admin.access, { file: GUIDE, title: 'Metformin' });
    await waitForJob(t.app, admin.access, doc.job?.id ?? '', 'completed');
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

  it('hears a spoken question without audio.commit, answers it aloud and stores the turn', async () => {
    const s = await session();
    const client = await connect(user.access, s.socket_url);
    expect(client.frames[0]).toMatchObject({ type: 'connected', session_id: s.session_id });
    const question = await speak('what is the first drug treatment for type two diabetes');
    await stream(client, Buffer.concat([silence(600), question, silence(1200)]));
    const complete = await client.next((f) => f.type === 'response.complete', 60_000);
    const transcript = await client.next((f) => f.type === 'transcript.complete');
    expect(String(transcript.text)).toMatch(/diabetes|treatment|drug/);
    await client.next(
      (f) => f.type === 'voice.state' && f.state === 'IDLE' && f.previous === 'SPEAKING',
      60_000,
    );
    expect(states(client)).toEqual(['LISTENING', 'PROCESSING', 'SPEAKING', 'IDLE']);
    expect(complete).toMatchObject({ interrupted: false });
    expect(String(complete.text)).toMatch(/metformin/i);
    const deltas = client
      .ofType('response.delta')
      .map((f) => String(f.text))
      .join('');
    expect(deltas.trim()).toBe(complete.text);
    const audio = client.ofType('audio.output');
    expect(audio.length).toBeGreaterThan(3);
    expect(audio.at(-1)).toMatchObject({ final: true, audio: '' });
    expect(audio.map((f) => f.seq)).toEqual(audio.map((_, i) => i));
    const pcm = Buffer.concat(audio.map((f) => Buffer.from(String(f.audio), 'base64')));
    expect(pcm.length / 2 / Number(audio[0]?.sample_rate)).toBeGreaterThan(1);
    const metrics = await client.next((f) => f.type === 'turn.metrics');
    expect(metrics).toMatchObject({ response_id: complete.response_id, interrupted: false });
    for (const k of [
      'stt_ms',
      'llm_first_token_ms',
      'tts_first_audio_ms',
      'end_to_end_ms',
      'eou_delay_ms',
    ]) {
      expect(typeof metrics[k], k).toBe('number');
    }
    const messages = await thread(s.conversation_id);
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', transcript.text],
      ['assistant', complete.text],
    ]);
    expect(messages[1]?.id).toBe(complete.message_id);
    const all = logged.join('');
    expect(all).toContain('voice socket opened');
    expect(all).not.toContain(String(transcript.text));
    expect(all).not.toContain('Offer metformin');
    expect(all).not.toContain(user.access);
    const scrape = await t.app.inject({ method: 'GET', url: '/metrics' });
    for (const stage of ['eou_delay', 'stt', 'llm_first_token', 'tts_first_audio', 'end_to_end']) {
      const count = new RegExp(`^voice_stage_seconds_count\\{stage="${stage}"\\} (\\d+)$`, 'm');
      expect(Number(count.exec(scrape.body)?.[1]), stage).toBeGreaterThan(0);
    }
    expect(scrape.body).toMatch(/^ws_connections\{endpoint="\/api\/voice\/pipeline-ws"\} [1-9]/m);
  });

  it('stops speaking when the user talks over the answer and stores only what was heard', async () => {
    const client = await connect();
    client.send({ type: 'text.input', text: 'How should metformin be started and reviewed?' });
    const first = await client.next((f) => f.type === 'audio.output', 30_000);
    const firstAt = performance.now();
    const interruption = await speak('stop please, that is enough');
    await sleep(Math.max(0, 1500 - (performance.now() - firstAt)));
    const from = client.frames.length;
    const streaming = stream(client, Buffer.concat([interruption, silence(800)]), 100);
    await client.next((f) => f.type === 'voice.state' && f.state === 'CANCELLED', 10_000, from);
    // What this client played: real time since the first audio, at most the audio it received.
    const mine = client.ofType('audio.output').filter((f) => f.response_id === first.response_id);
    const receivedMs = mine.reduce(
      (ms, f) => ms + Buffer.from(String(f.audio), 'base64').length / 32,
      0,
    );
    const playedMs = Math.round(Math.min(receivedMs, performance.now() - firstAt));
    client.send({
      type: 'response.truncate',
      response_id: first.response_id,
      audio_end_ms: playedMs,
    });
    await streaming;
    const complete = await client.next((f) => f.type === 'response.complete', 30_000);
    expect(complete).toMatchObject({ response_id: first.response_id, interrupted: true });
    expect(states(client, from).slice(0, 2)).toEqual(['CANCELLED', 'LISTENING']);
    // The audio stopped within a frame or two of the detector's decision.
    const lastAudio = client.frames.findLastIndex(
      (f) => f.type === 'audio.output' && f.response_id === first.response_id,
    );
    const cancelledAt = client.frames.findIndex((f, i) => i >= from && f.state === 'CANCELLED');
    expect(lastAudio).toBeLessThan(cancelledAt);
    // The stored text is the text of the first `playedMs` of the answer's audio, as the same
    // speech engine times each sentence.
    const full = client
      .ofType('response.delta')
      .filter((f) => f.response_id === first.response_id)
      .map((f) => String(f.text))
      .join('');
    const expected = heardText(await timedSentences(full), playedMs);
    expect(expected.length).toBeGreaterThan(0);
    expect(complete.text).toBe(expected);
    expect(String(complete.text).length).toBeLessThan(full.trim().length);
    const transcript = await client.next((f) => f.type === 'transcript.complete');
    const stored = await t.app.inject({
      method: 'GET',
      url: '/conversations',
      headers: bearer(user.access),
    });
    const conversations = dataOf<{ items: { id: string }[] }>(stored).items;
    const all = (await Promise.all(conversations.map((c) => thread(c.id)))).flat();
    expect(all.find((m) => m.id === transcript.message_id)?.role).toBe('user');
    expect(all.find((m) => m.id === complete.message_id)).toMatchObject({
      content: expected,
      interrupted: true,
    });
  });

  it('holds the audio for a click over the answer, then goes on without interrupting', async () => {
    const client = await connect();
    client.send({ type: 'text.input', text: 'How should metformin be started and reviewed?' });
    const first = await client.next((f) => f.type === 'audio.output', 30_000);
    await sleep(300);
    await stream(client, Buffer.concat([await tone(100, 1000, 0.8), silence(600)]), 100);
    const complete = await client.next((f) => f.type === 'response.complete', 60_000);
    expect(complete).toMatchObject({ response_id: first.response_id, interrupted: false });
    expect(states(client)).not.toContain('CANCELLED');
    expect(client.ofType('audio.output').at(-1)).toMatchObject({ final: true });
  });

  it('cuts the stored answer where the client says it stopped playing (response.truncate)', async () => {
    const client = await connect();
    client.send({ type: 'text.input', text: 'How should metformin be started and reviewed?' });
    const first = await client.next((f) => f.type === 'audio.output', 30_000);
    client.send({ type: 'response.truncate', response_id: first.response_id, audio_end_ms: 0 });
    const complete = await client.next((f) => f.type === 'response.complete', 30_000);
    expect(complete).toMatchObject({ interrupted: true, text: '', citations: [] });
    await client.next((f) => f.type === 'voice.state' && f.state === 'IDLE');
    expect(states(client).slice(-2)).toEqual(['CANCELLED', 'IDLE']);
  });

  it('ends the utterance on audio.commit without waiting for silence (push to talk)', async () => {
    const client = await connect();
    await stream(client, Buffer.concat([silence(300), await speak('what dose of metformin')]));
    client.send({ type: 'audio.commit' });
    const processing = await client.next(
      (f) => f.type === 'voice.state' && f.state === 'PROCESSING',
      20_000,
    );
    expect(processing.reason).toBe('commit');
    const transcript = await client.next((f) => f.type === 'transcript.complete', 20_000);
    expect(String(transcript.text)).toMatch(/dose|metformin|what/);
    await client.next((f) => f.type === 'response.complete', 30_000);
    // Nothing left to commit: an error, and the socket goes on.
    client.send({ type: 'audio.commit', request_ref: 'again' });
    const error = await client.next((f) => f.type === 'error');
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', request_ref: 'again' });
  });

  it('runs the calculator as a tool and speaks its result', async () => {
    const client = await connect();
    client.send({ type: 'text.input', text: 'BMI for 80 kg and 1.80 m' });
    const call = await client.next((f) => f.type === 'tool.call', 30_000);
    expect(call).toMatchObject({ name: 'medical_calculator' });
    const result = await client.next((f) => f.type === 'tool.result', 30_000);
    expect(result).toMatchObject({ call_id: call.call_id, name: 'medical_calculator' });
    expect(result.error).toBeUndefined();
    const complete = await client.next((f) => f.type === 'response.complete', 30_000);
    expect(String(complete.text)).toMatch(/24\.7/);
    expect(client.ofType('audio.output').length).toBeGreaterThan(1);
  });

  it('reports a turn it cannot store (its conversation deleted) and goes on', async () => {
    const s = await session();
    const client = await connect(user.access, s.socket_url);
    const removed = await t.app.inject({
      method: 'DELETE',
      url: `/conversations/${s.conversation_id}`,
      headers: bearer(user.access),
    });
    expect(removed.statusCode, removed.body).toBe(200);
    client.send({ type: 'text.input', text: 'What dose of metformin?' });
    const error = await client.next((f) => f.type === 'error');
    expect(error).toMatchObject({ code: 'NOT_FOUND', recoverable: true });
    await client.next((f) => f.type === 'voice.state' && f.state === 'IDLE');
    expect(states(client)).toEqual(['PROCESSING', 'ERROR', 'IDLE']);
    await client.roundTrip();
  });

  it('starts no turn on steady background noise or a click', async () => {
    const client = await connect();
    await stream(client, await noise('white', 4, 0.1));
    await stream(client, await noise('brown', 3, 0.3));
    await client.roundTrip();
    expect(client.ofType('voice.state')).toEqual([]);
    expect(client.ofType('transcript.complete')).toEqual([]);
  });

  it('answers malformed frames with VALIDATION_ERROR and stays usable', async () => {
    const client = await connect();
    const bad = [
      { type: 'audio.input', audio: 'not base64 at all!' },
      { type: 'audio.input', audio: Buffer.from([1, 2, 3]).toString('base64') },
      { type: 'audio.input', audio: 'A'.repeat(70_000) },
      { type: 'audio.input' },
      { type: 'audio.input', audio: 'AAAA', extra: 1 },
      { type: 'nope' },
      { type: 'session.update', turn_detection: { silence_ms: 5 } },
      { type: 'response.truncate', response_id: 'x', audio_end_ms: -1 },
    ];
    for (const frame of bad) client.send(frame);
    client.send('{not json');
    client.ws.send(Buffer.from([1, 2, 3, 4]), { binary: true });
    await client.roundTrip();
    const errors = client.ofType('error');
    expect(errors).toHaveLength(bad.length + 2);
    for (const e of errors)
      expect(e).toMatchObject({ code: 'VALIDATION_ERROR', recoverable: true });
    client.send({ type: 'response.cancel' });
    await client.roundTrip();
    expect(client.ofType('error').at(-1)).toMatchObject({ code: 'NOT_FOUND', recoverable: true });
  });

  it("refuses bad tokens (4401), others' sessions (4404) and a third session per user (4429)", async () => {
    const anonymous = await ChatClient.open(port, 'not-a-token', PATH);
    expect((await anonymous.closed).code).toBe(4401);
    const mine = await session();
    const theirs = await ChatClient.open(port, other.access, mine.socket_url);
    expect((await theirs.closed).code).toBe(4404);
    await connect();
    await connect(user.access, '/api/realtime');
    const third = await ChatClient.open(port, user.access, PATH);
    expect((await third.closed).code).toBe(4429);
    expect(third.frames[0]).toMatchObject({ type: 'error', code: 'RATE_LIMITED' });
  });

  it('applies session.update and refuses a conversation of another user', async () => {
    const client = await connect();
    client.send({ type: 'session.update', barge_in: false, turn_detection: { silence_ms: 800 } });
    const updated = await client.next((f) => f.type === 'session.updated');
    expect(updated.session).toMatchObject({
      barge_in: false,
      turn_detection: { silence_ms: 800, min_speech_ms: 200 },
    });
    const theirs = await session({}, other.access);
    client.send({ type: 'session.update', conversation_id: theirs.conversation_id });
    const error = await client.next((f) => f.type === 'error');
    expect(error).toMatchObject({ code: 'NOT_FOUND', recoverable: true });
  });
});

export type { Frame };
