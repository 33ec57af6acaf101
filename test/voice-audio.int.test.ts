import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWav, encodeWav } from '../src/platform/audio/wav.js';
import { bufferToInt16 } from '../src/platform/audio/pcm.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, errorOf, type TestUser } from './helpers/factories.js';
import { multipartBody, uploadNew, waitForJob, type Part } from './helpers/knowledge.js';
import { speak } from './helpers/speech-audio.js';

/**
 * `POST /api/voice/audio`: one spoken question as a multipart upload, answered with its
 * transcript, the answer with citations and the answer spoken, and stored like a socket turn.
 */

const run = promisify(execFile);

const GUIDE = [
  'Metformin in type 2 diabetes',
  '',
  'Offer metformin as the first drug treatment for adults with type 2 diabetes.',
  'Do not start metformin when the eGFR is below 30.',
].join('\n');

interface AudioAnswer {
  conversation_id: string;
  transcript: string;
  user_message_id: string | null;
  message_id: string | null;
  response_text: string;
  citations: { index: number; chunkId: string }[];
  audio: { format: string; sample_rate: number; data: string } | null;
}

/** `pcm` (16 kHz mono) as a WAV file at `rate` with `channels`, made by SoX. */
async function wavOf(pcm: Buffer, rate: number, channels: number): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'voice-audio-'));
  try {
    const source = path.join(dir, 'in.wav');
    const target = path.join(dir, 'out.wav');
    await writeFile(source, encodeWav(bufferToInt16(pcm), 16_000));
    await run('sox', [source, '-r', String(rate), '-c', String(channels), '-b', '16', target]);
    return await readFile(target);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('POST /api/voice/audio', () => {
  let t: TestApp;
  let user: TestUser;
  let question: Buffer;
  const send = async (parts: Part[], token = user.access) => {
    const { payload, contentType } = multipartBody(parts);
    return t.app.inject({
      method: 'POST',
      url: '/api/voice/audio',
      headers: { ...bearer(token), 'content-type': contentType },
      payload,
    });
  };
  const file = (content: Buffer, filename = 'question.wav'): Part => ({
    name: 'file',
    filename,
    content,
    contentType: 'audio/wav',
  });

  beforeAll(async () => {
    t = await createTestApp();
    const admin = await createUser(t.app, t.deps, { admin: true });
    user = await createUser(t.app, t.deps);
    const doc = await uploadNew(t.app, admin.access, { file: GUIDE, title: 'Metformin' });
    await waitForJob(t.app, admin.access, doc.job?.id ?? '', 'completed');
    question = await speak('what is the first drug treatment for type two diabetes');
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['a 16 kHz mono WAV', () => wavOf(question, 16_000, 1)],
    ['a 44.1 kHz stereo WAV', () => wavOf(question, 44_100, 2)],
    ['a 48 kHz mono WAV', () => wavOf(question, 48_000, 1)],
    ['raw PCM16 16 kHz', () => Promise.resolve(question)],
  ])('answers %s with the transcript, a cited answer and the answer spoken', async (_, make) => {
    const res = await send([file(await make())]);
    expect(res.statusCode, res.body).toBe(200);
    const answer = dataOf<AudioAnswer>(res);
    expect(answer.transcript).toMatch(/diabetes|treatment|drug/);
    expect(answer.response_text).toMatch(/metformin/i);
    expect(answer.citations.length).toBeGreaterThan(0);
    expect(answer.audio?.format).toBe('wav');
    const spoken = decodeWav(Buffer.from(answer.audio?.data ?? '', 'base64'), {
      sampleRate: answer.audio?.sample_rate ?? 16_000,
    });
    expect(spoken.length / (answer.audio?.sample_rate ?? 1)).toBeGreaterThan(1);
    const thread = await t.app.inject({
      method: 'GET',
      url: `/conversations/${answer.conversation_id}/messages`,
      headers: bearer(user.access),
    });
    const items = dataOf<{ items: { id: string; role: string; content: string }[] }>(thread).items;
    expect(items.map((m) => [m.id, m.role, m.content])).toEqual([
      [answer.user_message_id, 'user', answer.transcript],
      [answer.message_id, 'assistant', answer.response_text],
    ]);
  });

  it('stores the turn on the conversation it names, and refuses one of another user', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/conversations',
      headers: bearer(user.access),
      payload: {},
    });
    const conversationId = dataOf<{ id: string }>(created).id;
    const res = await send([
      file(question, 'q.pcm'),
      { name: 'conversation_id', value: conversationId },
    ]);
    expect(dataOf<AudioAnswer>(res).conversation_id).toBe(conversationId);
    const other = await createUser(t.app, t.deps);
    const refused = await send(
      [file(question, 'q.pcm'), { name: 'conversation_id', value: conversationId }],
      other.access,
    );
    expect(errorOf(refused, 404).code).toBe('NOT_FOUND');
  });

  it('answers silence with an empty transcript and nothing stored', async () => {
    const res = await send([file(Buffer.alloc(32_000), 'silence.pcm')]);
    expect(res.statusCode, res.body).toBe(200);
    const answer = dataOf<AudioAnswer>(res);
    expect(answer).toMatchObject({
      transcript: '',
      user_message_id: null,
      message_id: null,
      response_text: '',
      audio: null,
    });
  });
});
