import { Type, type Static } from 'typebox';
import type { LlmConfig } from './providers/llm/index.js';

/**
 * The language model's settings. Declared here to keep config.ts readable; config.ts still reads
 * the environment and validates them with everything else, so one message names every bad key.
 * The endpoint and its key are the knowledge base's OPENAI_BASE_URL and OPENAI_API_KEY.
 */

export const LlmEnv = {
  LLM_PROVIDER: Type.Union([Type.Literal('extractive'), Type.Literal('openai')], {
    default: 'extractive',
  }),
  LLM_MODEL: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  LLM_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 30_000 }),
  LLM_MAX_TOKENS: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  /** The operator port's probe of the model (GET /models): longest wait for its answer. */
  LLM_HEALTH_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 2000 }),
  /** A probe answered slower than this reports the model `degraded`. */
  LLM_HEALTH_SLOW_MS: Type.Integer({ minimum: 1, maximum: 60_000, default: 1000 }),
  // Text, since the environment parser turns only integers and booleans into values.
  LLM_TEMPERATURE: Type.Optional(
    Type.String({
      pattern: '^(([01](\\.[0-9]{1,3})?)|(2(\\.0{1,3})?))$',
      description: 'a number from 0 to 2, like 0.2',
    }),
  ),
};

type LlmEnvValues = Static<ReturnType<typeof Type.Object<typeof LlmEnv>>> & {
  OPENAI_BASE_URL?: string | undefined;
  OPENAI_API_KEY?: string | undefined;
};

export interface LlmSettings {
  llm: LlmConfig;
  /** The health probe of the provider status (issue 22 item 7). */
  llmHealth: { timeoutMs: number; slowMs: number };
}

/** Cross-key rules; problems go into the one list config.ts reports. */
export function checkLlm(env: LlmEnvValues, problems: Map<string, string>): void {
  const health = ['LLM_HEALTH_SLOW_MS', 'LLM_HEALTH_TIMEOUT_MS'];
  const bothValid = health.every((key) => !problems.has(key));
  if (bothValid && env.LLM_HEALTH_SLOW_MS >= env.LLM_HEALTH_TIMEOUT_MS) {
    problems.set('LLM_HEALTH_SLOW_MS', 'must be below LLM_HEALTH_TIMEOUT_MS');
  }
  if (env.LLM_PROVIDER !== 'openai') return;
  for (const key of ['OPENAI_BASE_URL', 'LLM_MODEL'] as const) {
    if (env[key] === undefined && !problems.has(key)) {
      problems.set(key, 'required when LLM_PROVIDER=openai');
    }
  }
}

export function llmConfig(env: LlmEnvValues): LlmSettings {
  const llmHealth = { timeoutMs: env.LLM_HEALTH_TIMEOUT_MS, slowMs: env.LLM_HEALTH_SLOW_MS };
  if (env.LLM_PROVIDER === 'extractive') return { llm: { provider: 'extractive' }, llmHealth };
  return {
    llmHealth,
    llm: {
      provider: 'openai',
      baseUrl: env.OPENAI_BASE_URL ?? '',
      apiKey: env.OPENAI_API_KEY,
      model: env.LLM_MODEL ?? '',
      timeoutMs: env.LLM_TIMEOUT_MS,
      maxTokens: env.LLM_MAX_TOKENS,
      temperature: env.LLM_TEMPERATURE === undefined ? undefined : Number(env.LLM_TEMPERATURE),
    },
  };
}
