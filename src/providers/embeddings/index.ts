import { HashedEmbeddings } from './hashed.js';
import { OpenAiEmbeddings } from './openai.js';
import type { EmbeddingsProvider } from './types.js';

export type { EmbeddingsProvider } from './types.js';
export { EmbeddingsProviderError } from './errors.js';

/** What createEmbeddings needs; src/config.ts builds it from the environment. */
export type EmbeddingsConfig =
  | { provider: 'hashed'; dimensions?: number }
  | {
      provider: 'openai';
      baseUrl: string;
      apiKey: string;
      model: string;
      dimensions?: number;
      batchSize?: number;
      timeoutMs?: number;
    };

/** The offline hashed embedder unless an OpenAI-compatible backend is configured. */
export function createEmbeddings(config: EmbeddingsConfig): EmbeddingsProvider {
  switch (config.provider) {
    case 'hashed':
      return new HashedEmbeddings(
        config.dimensions === undefined ? {} : { dimensions: config.dimensions },
      );
    case 'openai':
      return new OpenAiEmbeddings(config);
  }
}
