import { describe, expect, it } from 'vitest';
import { HashedEmbeddings } from './hashed.js';
import { createEmbeddings } from './index.js';
import { OpenAiEmbeddings } from './openai.js';

describe('createEmbeddings', () => {
  it('builds the offline hashed embedder by default settings', () => {
    const provider = createEmbeddings({ provider: 'hashed' });
    expect(provider).toBeInstanceOf(HashedEmbeddings);
    expect(provider.model).toBe('hashed-ngrams-v3-768');
    expect(createEmbeddings({ provider: 'hashed', dimensions: 256 }).dimensions).toBe(256);
  });

  it('builds the OpenAI-compatible adapter when configured', () => {
    const provider = createEmbeddings({
      provider: 'openai',
      baseUrl: 'http://127.0.0.1:1/v1',
      apiKey: 'k',
      model: 'nomic-embed-text',
      dimensions: 768,
    });
    expect(provider).toBeInstanceOf(OpenAiEmbeddings);
    expect(provider.model).toBe('nomic-embed-text@768');
  });
});
