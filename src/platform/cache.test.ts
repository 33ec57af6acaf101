import { describe, expect, it } from 'vitest';
import { TtlCache } from './cache.js';

describe('TtlCache', () => {
  it('expires entries, counts hits and misses, and evicts the oldest when full', () => {
    let now = 0;
    const cache = new TtlCache<string>(100, 2, () => now);
    cache.set('a', 'A');
    expect(cache.get('a')).toBe('A');
    now = 100;
    expect(cache.get('a')).toBeUndefined();
    cache.set('a', 'A');
    cache.set('b', 'B');
    cache.set('c', 'C');
    expect(cache.size).toBe(2);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('c')).toBe('C');
    expect({ hits: cache.hits, misses: cache.misses }).toEqual({ hits: 2, misses: 2 });
  });

  it('keeps its counts when cleared or emptied, so a counter reading them never goes down', () => {
    const cache = new TtlCache<string>(1000);
    cache.set('a', 'A');
    cache.get('a');
    cache.get('b');
    cache.delete('a');
    cache.clear();
    expect({ hits: cache.hits, misses: cache.misses }).toEqual({ hits: 1, misses: 1 });
    cache.get('a');
    expect({ hits: cache.hits, misses: cache.misses }).toEqual({ hits: 1, misses: 2 });
  });

  it('stores nothing with a zero TTL', () => {
    const cache = new TtlCache<number>(0);
    cache.set('a', 1);
    expect(cache.get('a')).toBeUndefined();
  });
});
