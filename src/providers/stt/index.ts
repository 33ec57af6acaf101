import { OpenAiSttProvider } from './openai.js';
import { PocketSphinxSttProvider, type AdaptedModel } from './pocketsphinx.js';
import type { SttProvider } from './types.js';

/**
 * The speech-to-text provider from configuration: PocketSphinx offline (the default) or an
 * OpenAI-compatible transcription endpoint.
 */

export interface SttConfig {
  provider: 'pocketsphinx' | 'openai';
  /** pocketsphinx: decoder threads (default 2). */
  poolSize?: number | undefined;
  /** pocketsphinx: longest wait for a free decoder (default 5 s). */
  acquireTimeoutMs?: number | undefined;
  /** pocketsphinx: directory of the en-us models (default Debian's). */
  modelDir?: string | undefined;
  /** pocketsphinx: a knowledge-base language model to interpolate from the start. */
  adaptedModel?: AdaptedModel | undefined;
  /** openai: e.g. https://api.openai.com/v1 (required). */
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  /** openai: default `whisper-1`. */
  model?: string | undefined;
  /** openai: longest wait for a transcription (default 30 s). */
  timeoutMs?: number | undefined;
  /** openai: default language (BCP 47) when a call names none. */
  language?: string | undefined;
}

/** A provider whose decoders can take a language model adapted to the knowledge base. */
export interface AdaptableSttProvider extends SttProvider {
  setAdaptedModel(model: AdaptedModel | null): Promise<void>;
}

export function createStt(config: SttConfig): SttProvider {
  switch (config.provider) {
    case 'pocketsphinx':
      return new PocketSphinxSttProvider({
        poolSize: config.poolSize,
        acquireTimeoutMs: config.acquireTimeoutMs,
        modelDir: config.modelDir,
        adaptedModel: config.adaptedModel,
      });
    case 'openai':
      if (config.baseUrl === undefined || config.baseUrl === '') {
        throw new Error('the openai speech-to-text provider needs a base URL');
      }
      return new OpenAiSttProvider({
        baseUrl: config.baseUrl,
        apiKey: config.apiKey,
        model: config.model,
        timeoutMs: config.timeoutMs,
        language: config.language,
      });
  }
}

export function isAdaptable(provider: SttProvider): provider is AdaptableSttProvider {
  return typeof (provider as Partial<AdaptableSttProvider>).setAdaptedModel === 'function';
}

export { OpenAiSttProvider, PocketSphinxSttProvider };
export type { AdaptedModel };
export type { OpenAiSttOptions } from './openai.js';
export type { PocketSphinxOptions } from './pocketsphinx.js';
