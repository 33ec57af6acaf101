import { EspeakTtsProvider } from './espeak.js';
import { FliteTtsProvider, isFliteVoice } from './flite.js';
import { LocalTtsProvider } from './local.js';
import { OpenAiTtsProvider } from './openai.js';
import type { TtsProvider } from './types.js';

export type { AudioChunk, TtsOptions, TtsProvider } from './types.js';
export { speakable } from './speakable.js';
export { spokenWords } from './spoken-words.js';
export { FLITE_VOICES } from './flite.js';

/** What createTts needs; src/config-voice.ts builds it from the environment. */
export interface TtsConfig {
  provider: 'local' | 'flite' | 'espeak-ng' | 'openai';
  /** The engine's voice (`slt`; `en-gb`; `alloy`); the provider's default when unset. */
  voice?: string | undefined;
  /** Time budget of one engine run (local) or longest wait for audio (openai). */
  timeoutMs: number;
  /** openai only. */
  model?: string | undefined;
  /** openai only: the OpenAI-compatible endpoint. */
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
}

/** A provider for `config`; throws (at start-up) for a voice the chosen engine does not have. */
export function createTts(config: TtsConfig): TtsProvider {
  const { voice, timeoutMs } = config;
  switch (config.provider) {
    case 'flite':
      if (voice !== undefined && !isFliteVoice(voice))
        throw new Error('TTS_VOICE is not a Flite voice');
      return new FliteTtsProvider({ voice, timeoutMs });
    case 'espeak-ng':
      return new EspeakTtsProvider({ voice, timeoutMs });
    case 'local':
      return new LocalTtsProvider({
        flite: { voice: isFliteVoice(voice) ? voice : undefined, timeoutMs },
        espeak: { voice: isFliteVoice(voice) ? undefined : voice, timeoutMs },
      });
    case 'openai':
      if (config.baseUrl === undefined || config.baseUrl === '') {
        throw new Error('OPENAI_BASE_URL is required for the openai speech provider');
      }
      return new OpenAiTtsProvider({
        baseUrl: config.baseUrl,
        apiKey: config.apiKey,
        model: config.model ?? 'tts-1',
        voice,
        timeoutMs,
      });
  }
}
