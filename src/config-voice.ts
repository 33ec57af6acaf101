import { Type, type Static } from 'typebox';

/**
 * The voice pipeline's settings (issue 11). Declared here to keep config.ts readable; config.ts
 * reads and validates them with everything else. The OpenAI-compatible speech adapters use the
 * knowledge base's OPENAI_BASE_URL and OPENAI_API_KEY.
 */
export const VoiceEnv = {
  STT_PROVIDER: Type.Union([Type.Literal('pocketsphinx'), Type.Literal('openai')], {
    default: 'pocketsphinx',
  }),
  STT_MODEL: Type.String({ minLength: 1, maxLength: 200, default: 'whisper-1' }),
  STT_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 64, default: 4 }),
  STT_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 30_000 }),
  /** Build a language model from the knowledge base and interpolate it (PocketSphinx). */
  STT_ADAPT_TO_KB: Type.Boolean({ default: true }),
  TTS_PROVIDER: Type.Union(
    [
      Type.Literal('local'),
      Type.Literal('flite'),
      Type.Literal('espeak-ng'),
      Type.Literal('openai'),
    ],
    { default: 'local' },
  ),
  TTS_VOICE: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.+-]+$' }),
  ),
  TTS_MODEL: Type.String({ minLength: 1, maxLength: 200, default: 'tts-1' }),
  TTS_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 10_000 }),
  VOICE_MAX_SESSIONS_PER_USER: Type.Integer({ minimum: 1, maximum: 1000, default: 2 }),
  VOICE_MAX_SESSIONS: Type.Integer({ minimum: 1, maximum: 100_000, default: 50 }),
  VOICE_IDLE_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 120_000 }),
  VOICE_MAX_UTTERANCE_MS: Type.Integer({ minimum: 1000, maximum: 300_000, default: 30_000 }),
  VOICE_OUTPUT_SAMPLE_RATE: Type.Integer({ minimum: 8000, maximum: 48_000, default: 16_000 }),
  VOICE_SESSION_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 86_400, default: 3600 }),
};

type VoiceEnvValues = Static<ReturnType<typeof Type.Object<typeof VoiceEnv>>> & {
  OPENAI_BASE_URL?: string | undefined;
  OPENAI_API_KEY?: string | undefined;
};

export interface VoiceSettingsConfig {
  voice: {
    stt: {
      provider: 'pocketsphinx' | 'openai';
      model: string;
      poolSize: number;
      timeoutMs: number;
      adaptToKnowledgeBase: boolean;
    };
    tts: {
      provider: 'local' | 'flite' | 'espeak-ng' | 'openai';
      voice: string | undefined;
      model: string;
      timeoutMs: number;
    };
    /** The OpenAI-compatible endpoint of the `openai` adapters. */
    openai: { baseUrl: string; apiKey: string | undefined };
    maxSessionsPerUser: number;
    maxSessions: number;
    idleTimeoutMs: number;
    maxUtteranceMs: number;
    outputSampleRate: number;
    sessionTtlSeconds: number;
  };
}

/** Cross-key rules; problems go into the one list config.ts reports. */
export function checkVoice(env: VoiceEnvValues, problems: Map<string, string>): void {
  const needsOpenAi = env.STT_PROVIDER === 'openai' || env.TTS_PROVIDER === 'openai';
  if (needsOpenAi && env.OPENAI_BASE_URL === undefined && !problems.has('OPENAI_BASE_URL')) {
    problems.set('OPENAI_BASE_URL', 'required when STT_PROVIDER or TTS_PROVIDER is openai');
  }
}

export function voiceConfig(env: VoiceEnvValues): VoiceSettingsConfig {
  return {
    voice: {
      stt: {
        provider: env.STT_PROVIDER,
        model: env.STT_MODEL,
        poolSize: env.STT_POOL_SIZE,
        timeoutMs: env.STT_TIMEOUT_MS,
        adaptToKnowledgeBase: env.STT_ADAPT_TO_KB,
      },
      tts: {
        provider: env.TTS_PROVIDER,
        voice: env.TTS_VOICE,
        model: env.TTS_MODEL,
        timeoutMs: env.TTS_TIMEOUT_MS,
      },
      openai: { baseUrl: env.OPENAI_BASE_URL ?? '', apiKey: env.OPENAI_API_KEY },
      maxSessionsPerUser: env.VOICE_MAX_SESSIONS_PER_USER,
      maxSessions: env.VOICE_MAX_SESSIONS,
      idleTimeoutMs: env.VOICE_IDLE_TIMEOUT_MS,
      maxUtteranceMs: env.VOICE_MAX_UTTERANCE_MS,
      outputSampleRate: env.VOICE_OUTPUT_SAMPLE_RATE,
      sessionTtlSeconds: env.VOICE_SESSION_TTL_SECONDS,
    },
  };
}
