import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, type TestUser } from './helpers/factories.js';
import { heardFromReceived, receivedSentences, saidWords } from './helpers/heard-audio.js';
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

/**
 * Waits until the client has received whole a sentence of the answer in which a displayed word is
 * said as several (by Flite): the sentence, where its audio starts in the answer, how many words
 * are said in all, the displayed words up to that one with the words said up to each, and its index.
 * Quick (a few Flite runs): the answer goes on playing meanwhile.
 */
async function sentenceWithLongWord(client: ChatClient, responseId: unknown) {
  const checked = new Set<number>();
  for (;;) {
    const from = client.frames.length;
    const sentences = receivedSentences(client, responseId);
    let start = 0;
    for (const sentence of sentences) {
      if (sentence.whole && !checked.has(sentence.index)) {
        checked.add(sentence.index);
        const displayed = sentence.text.split(/\s+/);
        const words: { word: string; said: number }[] = [];
        for (const [i, word] of displayed.entries()) {
          const said = await saidWords(displayed.slice(0, i + 1).join(' '));
          words.push({ word, said });
          if (said - (words[i - 1]?.said ?? 0) >= 2) {
            return { start, sentence, total: await saidWords(sentence.text), words, at: i };
          }
        }
      }
      start += sentence.ms;
    }
    if (sentences.at(-1)?.whole === true) throw new Error('no sentence has a word said as several');
    await client.next(
      (f) => f.type === 'audio.output' && f.response_id === responseId,
      30_000,
      from,
    );
  }
}

// Speech runs at real time and the first turn loads the decoders: every test may take as long as
// the waits inside it (up to 60 s on a loaded machine), not the suite's default 30 s.
describe('voice socket', { timeout: 120_000 }, () => {
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
    // The untitled conversation the session made is named after the spoken question.
    const named = await t.app.inject({
      method: 'GET',
      url: `/conversations/${s.conversation_id}`,
      headers: bearer(user.access),
    });
    expect(dataOf<{ title: string }>(named).title).toBe(transcript.text);
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
    // Spoken over the answer once its first sentence has been received whole.
    await client.next((f) => f.type === 'audio.output' && Number(f.sentence) > 0, 30_000);
    const from = client.frames.length;
    const streaming = stream(client, Buffer.concat([interruption, silence(800)]), 100);
    await client.next((f) => f.type === 'voice.state' && f.state === 'CANCELLED', 10_000, from);
    // What this client played: real time since the first audio, at most the audio it received,
    // and (so that this client can tell which words that was) at most the end of the last sentence
    // it received whole: where the words of a sentence received in part fall, it cannot know.
    const sentences = receivedSentences(client, first.response_id);
    const receivedMs = sentences.reduce((ms, s) => ms + s.ms, 0);
    const wholeMs = sentences.filter((s) => s.whole).reduce((ms, s) => ms + s.ms, 0);
    const realMs = Math.min(receivedMs, performance.now() - firstAt);
    const playedMs = Math.floor(
      realMs <= wholeMs || sentences.at(-1)?.whole === true ? realMs : wholeMs,
    );
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
    // The stored text is the text of the first `playedMs` of the audio this client received.
    const expected = await heardFromReceived(sentences, playedMs);
    expect(expected.length).toBeGreaterThan(0);
    expect(complete.text, JSON.stringify({ sentences, playedMs })).toBe(expected);
    const full = client
      .ofType('response.delta')
      .filter((f) => f.response_id === first.response_id)
      .map((f) => String(f.text))
      .join('');
    expect(String(complete.text).length).toBeLessThan(full.trim().length);
    expect(full.replace(/\s+/g, ' ').trim()).toContain(sentences.map((s) => s.text).join(' '));
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
  }, 60_000);

  it('cuts the stored answer inside a sentence by the words said, not the words displayed', async () => {
    // A displayed word said as several ("500": "five hundred"), cut inside it and just after it.
    for (const cut of ['inside', 'after'] as const) {
      const client = await connect();
      client.send({ type: 'text.input', text: 'What dose of metformin should be started?' });
      const first = await client.next((f) => f.type === 'audio.output', 30_000);
      const target = await sentenceWithLongWord(client, first.response_id);
      const { start, sentence, total, words, at } = target;
      const before = at === 0 ? 0 : (words[at - 1]?.said ?? 0);
      const heard = cut === 'inside' ? before + 1 : (words[at]?.said ?? 0);
      // The middle of the next word's share of the sentence's audio: clear of both its ends.
      const audioEndMs = Math.round(start + ((heard + 0.5) / total) * sentence.ms);
      client.send({
        type: 'response.truncate',
        response_id: first.response_id,
        audio_end_ms: audioEndMs,
      });
      const complete = await client.next((f) => f.type === 'response.complete', 30_000);
      const received = receivedSentences(client, first.response_id);
      const expected = await heardFromReceived(received, audioEndMs);
      // What that is, said plainly: the whole sentences before, then the words up to the long
      // one, which is kept only when all of it was said.
      const kept = words.slice(0, cut === 'inside' ? at : at + 1).map((w) => w.word);
      const whole = received.filter((s) => s.index < sentence.index).map((s) => s.text);
      expect(expected).toBe([...whole, ...kept].join(' '));
      expect(complete.interrupted).toBe(true);
      expect(complete.text).toBe(expected);
      const conversations = dataOf<{ items: { id: string }[] }>(
        await t.app.inject({ method: 'GET', url: '/conversations', headers: bearer(user.access) }),
      ).items;
      const all = (await Promise.all(conversations.map((c) => thread(c.id)))).flat();
      expect(all.find((m) => m.id === complete.message_id)?.content).toBe(expected);
    }
  }, 120_000);

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

  it('ends the utterance on audio.commit; a second commit, or one before any audio, is acknowledged silently', async () => {
    const s = await session();
    const client = await connect(user.access, s.socket_url);
    // Nothing heard yet: nothing to commit, and nothing said about it.
    client.send({ type: 'audio.commit', request_ref: 'before-audio' });
    await client.roundTrip();
    expect(client.frames.map((f) => f.type)).toEqual(['connected', 'pong']);
    // Push to talk released: the client commits, twice (a double click, a retry).
    await stream(client, Buffer.concat([silence(300), await speak('what dose of metformin')]));
    client.send({ type: 'audio.commit' });
    client.send({ type: 'audio.commit', request_ref: 'again' });
    const processing = await client.next(
      (f) => f.type === 'voice.state' && f.state === 'PROCESSING',
      20_000,
    );
    expect(processing.reason).toBe('commit');
    const transcript = await client.next((f) => f.type === 'transcript.complete', 20_000);
    expect(String(transcript.text)).toMatch(/dose|metformin|what/);
    const complete = await client.next((f) => f.type === 'response.complete', 30_000);
    await client.next((f) => f.type === 'voice.state' && f.state === 'IDLE', 30_000);
    // And once more after the answer: still nothing to commit.
    client.send({ type: 'audio.commit', request_ref: 'after' });
    await client.roundTrip();
    expect(client.ofType('error')).toEqual([]);
    expect(states(client)).toEqual(['LISTENING', 'PROCESSING', 'SPEAKING', 'IDLE']);
    expect(client.ofType('transcript.complete')).toHaveLength(1);
    const messages = await thread(s.conversation_id);
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', transcript.text],
      ['assistant', complete.text],
    ]);
  });

  it('acknowledges silently the commit of a push to talk whose end the detector found first', async () => {
    const s = await session();
    const client = await connect(user.access, s.socket_url);
    const question = await speak('what dose of metformin');
    /** One press of the button: speech, then enough silence for the detector to end it. */
    const press = async () => {
      const from = client.frames.length;
      await stream(client, Buffer.concat([silence(300), question, silence(1200)]));
      return from;
    };
    // Released at once: the commit arrives while the answer is being prepared.
    const first = await press();
    client.send({ type: 'audio.commit', request_ref: 'late' });
    await client.next((f) => f.type === 'response.complete', 60_000, first);
    await client.next((f) => f.type === 'voice.state' && f.state === 'IDLE', 60_000, first);
    // Held through the whole answer: more silence, then the commit, with the session IDLE.
    const second = await press();
    await client.next((f) => f.type === 'response.complete', 60_000, second);
    await client.next((f) => f.type === 'voice.state' && f.state === 'IDLE', 60_000, second);
    await stream(client, silence(600));
    client.send({ type: 'audio.commit', request_ref: 'held' });
    // A typed question next: any turn the commit had started would come before its answer.
    const typed = client.frames.length;
    client.send({ type: 'text.input', text: 'What dose of metformin?' });
    await client.next((f) => f.type === 'response.complete', 60_000, typed);
    await client.next((f) => f.type === 'voice.state' && f.state === 'IDLE', 60_000, typed);
    expect(client.ofType('error')).toEqual([]);
    const turn = ['LISTENING', 'PROCESSING', 'SPEAKING', 'IDLE'];
    expect(states(client)).toEqual([...turn, ...turn, 'PROCESSING', 'SPEAKING', 'IDLE']);
    expect(client.ofType('voice.state').filter((f) => f.reason === 'commit')).toEqual([]);
    // Two spoken questions and the typed one; none empty.
    const transcripts = client.ofType('transcript.complete');
    expect(transcripts.map((f) => f.message_id === null || f.text === '')).toEqual([
      false,
      false,
      false,
    ]);
    const messages = await thread(s.conversation_id);
    expect(messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
  }, 180_000);

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
