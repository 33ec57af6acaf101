import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('configuration was accepted');
}

describe('language model configuration', () => {
  it('defaults to the offline extractive provider', () => {
    expect(loadConfig({}).llm).toEqual({ provider: 'extractive' });
  });

  it('reads an OpenAI-compatible endpoint, the key being optional', () => {
    const config = loadConfig({
      LLM_PROVIDER: 'openai',
      OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
      LLM_MODEL: 'llama3.1:8b',
      LLM_TIMEOUT_MS: '45000',
      LLM_MAX_TOKENS: '800',
      LLM_TEMPERATURE: '0.2',
    });
    expect(config.llm).toEqual({
      provider: 'openai',
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: undefined,
      model: 'llama3.1:8b',
      timeoutMs: 45_000,
      maxTokens: 800,
      temperature: 0.2,
    });
  });

  it('defaults the timeout to 30 s and leaves tokens and temperature to the server', () => {
    const config = loadConfig({
      LLM_PROVIDER: 'openai',
      OPENAI_BASE_URL: 'https://api.openai.com/v1',
      OPENAI_API_KEY: 'sk-abc',
      LLM_MODEL: 'gpt-4o-mini',
    });
    expect(config.llm).toMatchObject({ apiKey: 'sk-abc', timeoutMs: 30_000 });
    expect(config.llm).toMatchObject({ maxTokens: undefined, temperature: undefined });
  });

  it('probes the model within 2 s and calls it slow above 1 s, unless told otherwise', () => {
    expect(loadConfig({}).llmHealth).toEqual({ timeoutMs: 2000, slowMs: 1000 });
    const config = loadConfig({ LLM_HEALTH_TIMEOUT_MS: '5000', LLM_HEALTH_SLOW_MS: '300' });
    expect(config.llmHealth).toEqual({ timeoutMs: 5000, slowMs: 300 });
    expect(problems({ LLM_HEALTH_TIMEOUT_MS: '500', LLM_HEALTH_SLOW_MS: '500' })).toEqual([
      'LLM_HEALTH_SLOW_MS: must be below LLM_HEALTH_TIMEOUT_MS',
    ]);
    expect(problems({ LLM_HEALTH_TIMEOUT_MS: '50' })).toEqual([
      expect.stringMatching(/^LLM_HEALTH_TIMEOUT_MS: /),
    ]);
  });

  it('requires the endpoint and the model for openai', () => {
    expect(problems({ LLM_PROVIDER: 'openai' })).toEqual([
      'OPENAI_BASE_URL: required when LLM_PROVIDER=openai',
      'LLM_MODEL: required when LLM_PROVIDER=openai',
    ]);
  });

  it('lists every bad key', () => {
    const found = problems({
      LLM_PROVIDER: 'anthropic',
      LLM_TIMEOUT_MS: '10',
      LLM_MAX_TOKENS: 'many',
      LLM_TEMPERATURE: '3',
    });
    expect(found).toEqual(
      expect.arrayContaining([
        'LLM_PROVIDER: must be one of extractive, openai',
        expect.stringMatching(/^LLM_TIMEOUT_MS: /),
        expect.stringMatching(/^LLM_MAX_TOKENS: /),
        'LLM_TEMPERATURE: must be a number from 0 to 2, like 0.2',
      ]),
    );
    expect(found).toHaveLength(4);
  });

  it.each(['0', '1', '0.7', '1.25', '2', '2.0'])('accepts temperature %s', (value) => {
    const config = loadConfig({
      LLM_PROVIDER: 'openai',
      OPENAI_BASE_URL: 'http://localhost:8000/v1',
      LLM_MODEL: 'm',
      LLM_TEMPERATURE: value,
    });
    expect(config.llm).toMatchObject({ temperature: Number(value) });
  });

  it.each(['-1', '2.5', 'warm', '.5', '1e0'])('refuses temperature %s', (value) => {
    expect(problems({ LLM_TEMPERATURE: value })).toEqual([
      'LLM_TEMPERATURE: must be a number from 0 to 2, like 0.2',
    ]);
  });
});
