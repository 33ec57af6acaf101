import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError } from '../src/providers/llm/types.js';
import { OpenAiSttProvider, type OpenAiSttOptions } from '../src/providers/stt/openai.js';
import { OpenAiTranscriptionServer } from './helpers/openai-transcription-server.js';
import { silence, speak } from './helpers/speech-audio.js';
import { collect, endless, finalText, frames, sttContract } from './helpers/stt-contract.js';

/**
 * The OpenAI-compatible transcription adapter against a local endpoint that checks the multipart
 * request and answers as scripted: the SttProvider contract, the request, errors, the timeout.
 */

const KEY = 'sk-test-0123456789abcdef';
const server = new OpenAiTranscriptionServer();
let speech: Buffer;
let shared: OpenAiSttProvider;

const make = (extra: Partial<OpenAiSttOptions> = {}) =>
  new OpenAiSttProvider({ baseUrl: server.baseUrl, apiKey: KEY, timeoutMs: 2000, ...extra });

beforeAll(async () => {
  [speech] = await Promise.all([speak('what is the dose of metformin'), server.start()]);
  shared = make();
});
afterAll(() => server.stop());
beforeEach(() => {
  server.script();
});

const run = (provider = shared, audio: AsyncIterable<Buffer> = frames(speech), language?: string) =>
  collect(
    provider.transcribe(audio, {
      signal: new AbortController().signal,
      ...(language === undefined ? {} : { language }),
    }),
  );

sttContract('openai', {
  provider: () => shared,
  speech: () => speech,
  keyWords: ['what', 'is', 'the', 'dose', 'of', 'metformin'],
  minWords: 6,
  partials: false,
});

describe('OpenAiSttProvider: the request', () => {
  it('posts the utterance as a 16 kHz mono PCM16 WAV file in a multipart form', async () => {
    expect(finalText(await run(make({ model: 'whisper-large-v3' }), frames(speech), 'en-US'))).toBe(
      'What is the dose of metformin?',
    );
    const [sent] = server.requests;
    expect(sent).toMatchObject({
      method: 'POST',
      path: '/v1/audio/transcriptions',
      authorization: `Bearer ${KEY}`,
      fields: { model: 'whisper-large-v3', language: 'en', response_format: 'json' },
      file: { name: 'utterance.wav', type: 'audio/wav' },
    });
    expect(sent!.contentType).toMatch(/^multipart\/form-data; boundary=/);
    const wav = sent!.file!.bytes;
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.readUInt32LE(4)).toBe(36 + speech.length);
    expect(wav.toString('ascii', 8, 16)).toBe('WAVEfmt ');
    expect(wav.readUInt16LE(20)).toBe(1); // PCM
    expect(wav.readUInt16LE(22)).toBe(1); // mono
    expect(wav.readUInt32LE(24)).toBe(16_000);
    expect(wav.readUInt16LE(34)).toBe(16);
    expect(wav.toString('ascii', 36, 40)).toBe('data');
    expect(wav.readUInt32LE(40)).toBe(speech.length);
    expect(wav.subarray(44).equals(speech)).toBe(true);
  });

  it('sends the default model, no language unless known, no Authorization without a key', async () => {
    await run(make({ apiKey: undefined }));
    const [sent] = server.requests;
    expect(sent!.fields.model).toBe('whisper-1');
    expect(sent!.fields.language).toBeUndefined();
    expect(sent!.authorization).toBeUndefined();
    await run(make({ language: 'de-AT' }));
    expect(server.requests[1]!.fields.language).toBe('de');
  });

  it("answers '' for less than 100 ms of audio without a request", async () => {
    expect(finalText(await run(shared, frames(silence(90))))).toBe('');
    expect(server.requests).toHaveLength(0);
  });

  it('refuses more than 30 s of audio without a request', async () => {
    const { error, events } = await run(shared, endless(speech, 0));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ retryable: false, message: expect.stringMatching(/30 s/) });
    expect(events).toHaveLength(0);
    expect(server.requests).toHaveLength(0);
  });

  it('trims the answer', async () => {
    server.script({ kind: 'text', text: '  dose of metformin \n' });
    expect(finalText(await run())).toBe('dose of metformin');
  });
});

describe('OpenAiSttProvider: failures', () => {
  it('maps a 429 to a retryable ProviderError with the wait asked for', async () => {
    server.script({
      kind: 'error',
      status: 429,
      headers: { 'retry-after': '2' },
      body: {
        error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' },
      },
    });
    const { error, events } = await run();
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      provider: 'openai',
      retryable: true,
      status: 429,
      retryAfterMs: 2000,
    });
    expect(events).toHaveLength(0);
  });

  it('maps a 500 to a retryable ProviderError', async () => {
    server.script({
      kind: 'error',
      status: 500,
      body: { error: { message: 'boom', type: 'server_error' } },
    });
    expect((await run()).error).toMatchObject({ retryable: true, status: 500 });
  });

  it('maps a 400 to a non-retryable ProviderError, and a 401 without the key', async () => {
    server.script(
      { kind: 'error', status: 400, body: { error: { message: 'Invalid file format.' } } },
      {
        kind: 'error',
        status: 401,
        body: { error: { message: `Incorrect API key provided: ${KEY}` } },
      },
    );
    expect((await run()).error).toMatchObject({ retryable: false, status: 400 });
    const { error } = await run();
    expect(error).toMatchObject({ retryable: false, status: 401 });
    expect((error as Error).message).not.toContain(KEY);
  });

  it('maps a reset connection and a refused one to retryable ProviderErrors', async () => {
    server.script({ kind: 'reset' });
    expect((await run()).error).toMatchObject({ retryable: true });
    const nowhere = new OpenAiSttProvider({ baseUrl: 'http://127.0.0.1:9/v1', timeoutMs: 2000 });
    expect((await run(nowhere)).error).toMatchObject({ retryable: true, provider: 'openai' });
  });

  it('times out a stalled request with a non-retryable ProviderError', async () => {
    server.script({ kind: 'silent' });
    const started = performance.now();
    const { error } = await run(make({ timeoutMs: 500 }));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ retryable: false, message: expect.stringMatching(/timed out/) });
    expect(performance.now() - started).toBeLessThan(2000);
    await server.requests[0]!.closed;
  });

  it('aborts the request when the signal aborts, and throws the reason', async () => {
    server.script({ kind: 'text', text: 'late', delayMs: 2000 });
    const controller = new AbortController();
    const reason = new Error('barge-in');
    const pending = collect(shared.transcribe(frames(speech), { signal: controller.signal }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.requests).toHaveLength(1);
    controller.abort(reason);
    const { error, events } = await pending;
    expect(error).toBe(reason);
    expect(events).toHaveLength(0);
    await server.requests[0]!.closed;
  });
});
