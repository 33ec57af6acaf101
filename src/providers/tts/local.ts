import { EspeakTtsProvider, type EspeakOptions } from './espeak.js';
import { FliteTtsProvider, isFliteVoice, type FliteOptions } from './flite.js';
import type { AudioChunk, TtsOptions, TtsProvider } from './types.js';

/**
 * The offline default: Flite (clearer, and better recognised by the STT) for English, eSpeak NG
 * for every other language (`options.language`). A voice given in the options goes to the
 * engine it names: a Flite voice to Flite, anything else to eSpeak NG.
 */

export interface LocalTtsOptions {
  flite?: FliteOptions;
  espeak?: EspeakOptions;
}

export class LocalTtsProvider implements TtsProvider {
  readonly name = 'local';
  readonly #flite: FliteTtsProvider;
  readonly #espeak: EspeakTtsProvider;

  constructor(options: LocalTtsOptions = {}) {
    this.#flite = new FliteTtsProvider(options.flite);
    this.#espeak = new EspeakTtsProvider(options.espeak);
  }

  synthesize(sentences: AsyncIterable<string>, options: TtsOptions): AsyncIterable<AudioChunk> {
    const { voice, ...rest } = options;
    const english = options.language === undefined || /^en(?:-|$)/i.test(options.language);
    if (english && (voice === undefined || isFliteVoice(voice))) {
      return this.#flite.synthesize(sentences, options);
    }
    const espeakVoice = voice === undefined || isFliteVoice(voice) ? {} : { voice };
    return this.#espeak.synthesize(sentences, { ...rest, ...espeakVoice });
  }

  async close(): Promise<void> {
    await Promise.all([this.#flite.close(), this.#espeak.close()]);
  }
}
