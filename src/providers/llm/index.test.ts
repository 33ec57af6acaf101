import { describe, expect, it } from 'vitest';
import { createLlmProvider } from './index.js';
import { OpenAiLlmProvider } from './openai.js';
import type { LlmProvider } from './types.js';

const extractive: LlmProvider = {
  name: 'extractive',
  model: 'extractive-1',
  // eslint-disable-next-line require-yield
  async *stream() {
    await Promise.resolve();
  },
};

describe('createLlmProvider', () => {
  it('builds the extractive provider through the caller', () => {
    expect(createLlmProvider({ provider: 'extractive' }, { extractive: () => extractive })).toBe(
      extractive,
    );
  });

  it('builds the OpenAI-compatible provider from its settings', () => {
    const provider = createLlmProvider(
      {
        provider: 'openai',
        baseUrl: 'http://127.0.0.1:11434/v1',
        apiKey: undefined,
        model: 'llama3.1:8b',
        timeoutMs: 30_000,
        maxTokens: undefined,
        temperature: 0.2,
      },
      {
        extractive: () => {
          throw new Error('not this one');
        },
      },
    );
    expect(provider).toBeInstanceOf(OpenAiLlmProvider);
    expect(provider).toMatchObject({ name: 'openai', model: 'llama3.1:8b' });
  });
});
