import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rms } from '../src/platform/audio/pcm.js';
import { ProviderError } from '../src/providers/llm/types.js';
import { FliteTtsProvider } from '../src/providers/tts/flite.js';
import {
  childProcesses,
  expectWellFormed,
  from,
  hear,
  pcmOf,
  ttsContract,
} from './helpers/tts-contract.js';

const tmp = mkdtempSync(join(tmpdir(), 'tts-flite-test-'));
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

ttsContract({
  label: 'flite',
  name: 'flite',
  make: () => new FliteTtsProvider({ tmpDir: tmp }),
  processNames: ['flite'],
  tmpDir: tmp,
});

describe('FliteTtsProvider', () => {
  it.each(['slt', 'rms', 'awb', 'kal', 'kal16'])('speaks with the %s voice', async (voice) => {
    const tts = new FliteTtsProvider({ tmpDir: tmp });
    const { chunks, error } = await hear(tts, from('Check the blood pressure.'), { voice });
    expect(error).toBeUndefined();
    expectWellFormed(chunks, [0], 16000);
  });

  it('refuses a voice it does not have (a path or URL never reaches flite)', async () => {
    const tts = new FliteTtsProvider({ tmpDir: tmp });
    for (const voice of ['/etc/passwd', 'http://x.example/v.flitevox', '--help', 'alloy']) {
      const { error } = await hear(tts, from('Hello.'), { voice });
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).retryable).toBe(false);
    }
  });

  it('speaks text that looks like options or shell syntax as text', async () => {
    const tts = new FliteTtsProvider({ tmpDir: tmp });
    const text = '-o /tmp/pwned.wav --help $(touch /tmp/pwned) `id`; rm -rf / | cat';
    const { chunks, error } = await hear(tts, from(text));
    expect(error).toBeUndefined();
    expect(rms(pcmOf(chunks))).toBeGreaterThan(0.01);
    expect(readdirSync('/tmp').filter((f) => f.startsWith('pwned'))).toEqual([]);
  });

  it('fails with a ProviderError when a run exceeds its time budget', async () => {
    const tts = new FliteTtsProvider({ tmpDir: tmp, timeoutMs: 1 });
    const { error } = await hear(tts, from('This sentence takes longer than a millisecond.'));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toMatch(/timed out/);
    expect(childProcesses(['flite'])).toEqual([]);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('fails with a ProviderError when the engine fails or is missing', async () => {
    for (const binary of ['/bin/false', '/nonexistent/flite']) {
      const tts = new FliteTtsProvider({ tmpDir: tmp, binary });
      const { error } = await hear(tts, from('Hello there.'));
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).provider).toBe('flite');
      expect((error as ProviderError).message).not.toContain('Hello');
    }
    expect(readdirSync(tmp)).toEqual([]);
  });
});
