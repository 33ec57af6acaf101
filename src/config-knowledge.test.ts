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

describe('search engine configuration (KB_SEARCH_ENGINE)', () => {
  it('ranks in this process by default, with or without Qdrant', () => {
    expect(loadConfig({}).searchEngine).toBe('embedded');
    const withQdrant = loadConfig({ QDRANT_URL: 'http://127.0.0.1:6333' });
    expect(withQdrant.searchEngine).toBe('embedded');
    expect(withQdrant.qdrant?.url).toBe('http://127.0.0.1:6333');
  });

  it('ranks in Qdrant when told to and Qdrant is configured', () => {
    const config = loadConfig({
      KB_SEARCH_ENGINE: 'qdrant',
      QDRANT_URL: 'http://qdrant:6333',
      QDRANT_COLLECTION_PREFIX: 'prod_',
    });
    expect(config.searchEngine).toBe('qdrant');
    expect(config.qdrant).toEqual({
      url: 'http://qdrant:6333',
      apiKey: undefined,
      collectionPrefix: 'prod_',
      timeoutMs: 10_000,
    });
  });

  it('refuses the Qdrant engine without QDRANT_URL, and unknown engines', () => {
    expect(problems({ KB_SEARCH_ENGINE: 'qdrant' })).toEqual([
      'QDRANT_URL: required when KB_SEARCH_ENGINE=qdrant',
    ]);
    expect(() => loadConfig({ KB_SEARCH_ENGINE: 'qdrant' })).toThrow(
      /QDRANT_URL: required when KB_SEARCH_ENGINE=qdrant/,
    );
    expect(problems({ KB_SEARCH_ENGINE: 'elastic' })).toEqual([
      expect.stringMatching(/^KB_SEARCH_ENGINE: /),
    ]);
  });
});
