import { describe, expect, it } from 'vitest';
import { rms } from '../src/platform/audio/pcm.js';
import { ProviderError } from '../src/providers/llm/types.js';
import { EspeakTtsProvider, parseVoiceList } from '../src/providers/tts/espeak.js';
import { expectWellFormed, from, hear, pcmOf, ttsContract } from './helpers/tts-contract.js';

ttsContract({
  label: 'espeak-ng',
  name: 'espeak-ng',
  make: () => new EspeakTtsProvider(),
  processNames: ['espeak-ng'],
});

ttsContract({
  label: 'espeak-ng in German',
  name: 'espeak-ng',
  language: 'de-DE',
  make: () => new EspeakTtsProvider(),
  processNames: ['espeak-ng'],
});

describe('EspeakTtsProvider', () => {
  it.each(['de', 'fr-FR', 'es', 'pt-BR', 'en-GB', 'zh'])(
    'finds a voice for %s',
    async (language) => {
      const tts = new EspeakTtsProvider();
      const { chunks, error } = await hear(tts, from('Bonjour, hallo, hola.'), { language });
      expect(error).toBeUndefined();
      expectWellFormed(chunks, [0], 16000);
    },
  );

  it('refuses a language it has no voice for', async () => {
    const { error } = await hear(new EspeakTtsProvider(), from('Hello.'), { language: 'tlh' });
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toMatch(/no eSpeak NG voice/);
  });

  it('refuses voice names that could be options or paths', async () => {
    for (const voice of ['--help', '-w/tmp/x', '../../etc/passwd', 'a b']) {
      const { error } = await hear(new EspeakTtsProvider(), from('Hello.'), { voice });
      expect(error).toBeInstanceOf(ProviderError);
    }
    expect(() => new EspeakTtsProvider({ voice: '-x' })).toThrow(ProviderError);
  });

  it('fails with a ProviderError for an unknown voice, a failing or a missing engine', async () => {
    const cases = [
      new EspeakTtsProvider({ voice: 'nosuchvoice' }),
      new EspeakTtsProvider({ binary: '/bin/false' }),
      new EspeakTtsProvider({ binary: '/nonexistent/espeak-ng' }),
    ];
    for (const tts of cases) {
      const { error } = await hear(tts, from('Hello there.'));
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).message).not.toContain('Hello');
    }
  });

  it('speaks text that looks like options as text', async () => {
    const { chunks, error } = await hear(new EspeakTtsProvider(), from('--help -w /tmp/x.wav'));
    expect(error).toBeUndefined();
    expect(rms(pcmOf(chunks))).toBeGreaterThan(0.01);
  });

  it('reads the voice list', () => {
    const list = Buffer.from(
      'Pty Language       Age/Gender VoiceName          File                 Other Languages\n' +
        ' 5  cmn             --/M      Chinese_(Mandarin) sit/cmn              (zh-cmn 5)(zh 5)\n' +
        ' 2  en-gb           --/M      English_(Great_Britain) gmw/en               (en 2)\n',
    );
    expect([...parseVoiceList(list)].sort()).toEqual(['cmn', 'en', 'en-gb', 'zh', 'zh-cmn']);
  });
});
