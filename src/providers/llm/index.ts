import { OpenAiLlmProvider } from './openai.js';
import type { LlmProvider } from './types.js';

export type {
  LlmEvent,
  LlmMessage,
  LlmProvider,
  LlmRequest,
  LlmTool,
  LlmToolCall,
  Passage,
} from './types.js';
export { ProviderError } from './types.js';
export { streamWithRetry, type RetryOptions } from './retry.js';
export { hasInvalidArguments, INVALID_ARGUMENTS } from './openai-chunks.js';

/** What createLlmProvider needs; src/config-llm.ts builds it from the environment. */
export type LlmConfig =
  | { provider: 'extractive' }
  | {
      provider: 'openai';
      baseUrl: string;
      /** Unset for local servers (Ollama, llama.cpp, vLLM) that need none. */
      apiKey: string | undefined;
      model: string;
      /** Longest wait for the first chunk and between chunks. */
      timeoutMs: number;
      maxTokens: number | undefined;
      temperature: number | undefined;
    };

/**
 * Providers built elsewhere. The offline extractive provider needs the caller's own wiring (its
 * options are not configuration), so createDeps passes a constructor for it.
 */
export interface LlmFactories {
  extractive: () => LlmProvider;
}

/** The extractive provider unless an OpenAI-compatible endpoint is configured. */
export function createLlmProvider(config: LlmConfig, factories: LlmFactories): LlmProvider {
  switch (config.provider) {
    case 'extractive':
      return factories.extractive();
    case 'openai':
      return new OpenAiLlmProvider({
        baseUrl: config.baseUrl,
        apiKey: config.apiKey,
        model: config.model,
        timeoutMs: config.timeoutMs,
        maxTokens: config.maxTokens,
        temperature: config.temperature,
      });
  }
}
