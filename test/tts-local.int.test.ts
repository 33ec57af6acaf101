import { describe, expect, it } from 'vitest';
import { ProviderError } from '../src/providers/llm/types.js';
import { createTts } from '../src/providers/tts/index.js';
import { LocalTtsProvider } from '../src/providers/tts/local.js';
import {
  childProcesses,
  expectWellFormed,
  from,
  hear,
  ttsContract,
} from './helpers/tts-contract.js';

ttsContract({
  label: 'local (English: Flite)',
  name: 'local',
  make: () => new LocalTtsProvider(),
  processNames: ['flite', 'espeak-ng'],
});

ttsContract({
  label: 'local (Italian: eSpeak NG)',
  name: 'local',
  language: 'it',
  make: () => new LocalTtsProvider(),
  processNames: ['flite', 'espeak-ng'],
});

/** Which engine ran: the one found among this process's children while the first chunk arrived. */
async function engineFor(tts: LocalTtsProvider, options: { language?: string; voice?: string }) {
  const seen = new Set<string>();
  async function* sentences(): AsyncIterable<string> {
    yield 'Hello there, this is a test.';
    await Promise.resolve();
    yield 'And this is the second sentence of it.';
  }
  const { error } = await hear(tts, sentences(), options, () => {
    for (const p of childProcesses(['flite', 'espeak-ng'])) seen.add(p.split(' ')[1] ?? '');
  });
  expect(error).toBeUndefined();
  return [...seen];
}

describe('LocalTtsProvider', () => {
  it('uses Flite for English and eSpeak NG otherwise', async () => {
    const tts = new LocalTtsProvider();
    expect(await engineFor(tts, {})).not.toContain('espeak-ng');
    expect(await engineFor(tts, { language: 'en-GB' })).not.toContain('espeak-ng');
    expect(await engineFor(tts, { language: 'de' })).not.toContain('flite');
    // A voice names its engine.
    expect(await engineFor(tts, { language: 'en', voice: 'en-gb' })).not.toContain('flite');
  });

  it('speaks German through eSpeak NG with a Flite voice configured', async () => {
    const tts = createTts({ provider: 'local', voice: 'rms', timeoutMs: 10_000 });
    const { chunks, error } = await hear(tts, from('Guten Tag.'), { language: 'de', voice: 'rms' });
    expect(error).toBeUndefined();
    expectWellFormed(chunks, [0], 16000);
  });

  it('createTts builds each provider and refuses a bad configuration', () => {
    expect(createTts({ provider: 'local', timeoutMs: 5000 }).name).toBe('local');
    expect(createTts({ provider: 'flite', voice: 'awb', timeoutMs: 5000 }).name).toBe('flite');
    expect(createTts({ provider: 'espeak-ng', voice: 'fr', timeoutMs: 5000 }).name).toBe(
      'espeak-ng',
    );
    expect(
      createTts({ provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1', timeoutMs: 5000 }).name,
    ).toBe('openai');
    expect(() => createTts({ provider: 'flite', voice: 'alloy', timeoutMs: 5000 })).toThrow(
      /Flite voice/,
    );
    expect(() => createTts({ provider: 'openai', baseUrl: '', timeoutMs: 5000 })).toThrow(
      /OPENAI_BASE_URL/,
    );
    expect(() => createTts({ provider: 'espeak-ng', voice: '--x', timeoutMs: 5000 })).toThrow(
      ProviderError,
    );
  });
});
