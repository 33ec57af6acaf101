import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError } from '../src/providers/llm/types.js';
import { OpenAiTtsProvider, type OpenAiTtsOptions } from '../src/providers/tts/openai.js';
import { OpenAiSpeechServer } from './helpers/openai-speech-server.js';
import { expectWellFormed, from, hear, ttsContract } from './helpers/tts-contract.js';

const KEY = 'sk-test-0123456789abcdef';
const server = new OpenAiSpeechServer();

beforeAll(() => server.start());
afterAll(() => server.stop());
beforeEach(() => {
  server.script();
});

const make = (extra: Partial<OpenAiTtsOptions> = {}) =>
  new OpenAiTtsProvider({
    baseUrl: server.baseUrl,
    apiKey: KEY,
    model: 'tts-1',
    timeoutMs: 1000,
    ...extra,
  });

ttsContract({
  label: 'openai (local server)',
  name: 'openai',
  make: () => make(),
  processNames: [],
});

describe('OpenAiTtsProvider', () => {
  it('asks for PCM with the model, voice and the text made speakable', async () => {
    const { chunks, error } = await hear(make(), from('Give 5 mg [1].', 'Then 10 mg.'), {
      voice: 'nova',
    });
    expect(error).toBeUndefined();
    expectWellFormed(chunks, [0, 1], 16000);
    expect(server.requests.map((r) => [r.path, r.authorization, r.body])).toEqual([
      [
        '/v1/audio/speech',
        `Bearer ${KEY}`,
        { model: 'tts-1', voice: 'nova', input: 'Give 5 milligrams.', response_format: 'pcm' },
      ],
      [
        '/v1/audio/speech',
        `Bearer ${KEY}`,
        { model: 'tts-1', voice: 'nova', input: 'Then 10 milligrams.', response_format: 'pcm' },
      ],
    ]);
  });

  it('sends no Authorization header without a key, and its default voice', async () => {
    await hear(make({ apiKey: undefined }), from('Hello.'));
    expect(server.requests[0]?.authorization).toBeUndefined();
    expect(server.requests[0]?.body.voice).toBe('alloy');
  });

  it('reads WAV answers too', async () => {
    const { chunks, error } = await hear(make({ format: 'wav' }), from('Hello there.'), {
      sampleRate: 22050,
    });
    expect(error).toBeUndefined();
    expect(server.requests[0]?.body.response_format).toBe('wav');
    expectWellFormed(chunks, [0], 22050);
  });

  it('maps a 429 to a retryable ProviderError with its retry-after', async () => {
    server.script({
      kind: 'error',
      status: 429,
      headers: { 'retry-after-ms': '1500' },
      message: `Rate limit reached for ${KEY}`,
    });
    const { chunks, error } = await hear(make(), from('Hello.'));
    expect(chunks).toEqual([]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      provider: 'openai',
      retryable: true,
      status: 429,
      retryAfterMs: 1500,
    });
    expect((error as Error).message).not.toContain(KEY);
  });

  it.each([500, 503])('maps a %i to a retryable ProviderError', async (status) => {
    server.script({ kind: 'error', status });
    const { error } = await hear(make(), from('Hello.'));
    expect(error).toMatchObject({ retryable: true, status });
  });

  it.each([400, 401])('maps a %i to a final ProviderError', async (status) => {
    server.script({ kind: 'error', status });
    const { error } = await hear(make(), from('Hello.'));
    expect(error).toMatchObject({ retryable: false, status });
  });

  it('times out a server that never answers', async () => {
    server.script({ kind: 'silent' });
    const started = performance.now();
    const { error } = await hear(make({ timeoutMs: 300 }), from('Hello.'));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ retryable: false });
    expect((error as Error).message).toMatch(/timed out/);
    expect(performance.now() - started).toBeLessThan(2000);
    await server.requests[0]?.closed;
  });

  it('times out a body that stalls after some audio', async () => {
    server.script({ kind: 'audio', stallAfterBlocks: 5 });
    const { chunks, error } = await hear(
      make({ timeoutMs: 300 }),
      from('Hello there, how are you?'),
    );
    expect(chunks.length).toBeGreaterThan(0);
    expect((error as Error).message).toMatch(/timed out/);
    await server.requests[0]?.closed;
  });

  it('maps a reset connection and an unreachable server to retryable errors', async () => {
    server.script({ kind: 'reset' });
    expect((await hear(make(), from('Hello.'))).error).toMatchObject({ retryable: true });
    const gone = make({ baseUrl: 'http://127.0.0.1:9/v1' });
    expect((await hear(gone, from('Hello.'))).error).toMatchObject({ retryable: true });
  });

  it('closes the request when aborted mid-body', async () => {
    server.script({ kind: 'audio', delayMs: 50 });
    const controller = new AbortController();
    const { error } = await hear(
      make(),
      from('A sentence long enough to take a while to say.'),
      {
        signal: controller.signal,
      },
      () => {
        controller.abort();
      },
    );
    expect((error as Error).name).toBe('AbortError');
    await server.requests[0]?.closed;
  });

  it('streams a sentence: the first chunk comes before its body has ended', async () => {
    server.script({ kind: 'audio', delayMs: 20 });
    let firstAt = 0;
    const started = performance.now();
    const { error } = await hear(
      make(),
      from('A long sentence, spoken as it is generated by the server.'),
      {},
      () => {
        firstAt ||= performance.now() - started;
      },
    );
    expect(error).toBeUndefined();
    const total = performance.now() - started;
    expect(firstAt).toBeLessThan(total / 2);
  });
});
