import { describe, expect, it } from 'vitest';
import { TtlCache } from './cache.js';
import { createMetrics } from './metrics.js';

/** cache_requests_total's samples, as the registry would write them now. */
async function cacheSamples(metrics: ReturnType<typeof createMetrics>) {
  const { values } = await metrics.cacheRequests.get();
  return Object.fromEntries(values.map((v) => [`${v.labels.layer}:${v.labels.result}`, v.value]));
}

describe('cache_requests_total', () => {
  it('adds up the hits and misses of every watched cache when scraped', async () => {
    const metrics = createMetrics();
    const users = new TtlCache<number>(1000);
    const tokens = new TtlCache<number>(1000);
    metrics.countCache('l1', users);
    metrics.countCache('l1', tokens);
    expect(await cacheSamples(metrics)).toEqual({ 'l1:hit': 0, 'l1:miss': 0 });
    users.set('a', 1);
    users.get('a');
    users.get('b');
    tokens.get('c');
    expect(await cacheSamples(metrics)).toEqual({ 'l1:hit': 1, 'l1:miss': 2 });
    // A second scrape with nothing new in between adds nothing.
    expect(await cacheSamples(metrics)).toEqual({ 'l1:hit': 1, 'l1:miss': 2 });
    users.clear();
    tokens.get('c');
    expect(await cacheSamples(metrics)).toEqual({ 'l1:hit': 1, 'l1:miss': 3 });
  });

  it('never goes down, even when a source reports fewer look-ups than before', async () => {
    const metrics = createMetrics();
    const counts = { hits: 5, misses: 4 };
    metrics.countCache('l1', counts);
    expect(await cacheSamples(metrics)).toEqual({ 'l1:hit': 5, 'l1:miss': 4 });
    Object.assign(counts, { hits: 1, misses: 0 });
    expect(await cacheSamples(metrics)).toEqual({ 'l1:hit': 5, 'l1:miss': 4 });
    Object.assign(counts, { hits: 3, misses: 1 });
    expect(await cacheSamples(metrics)).toEqual({ 'l1:hit': 7, 'l1:miss': 5 });
  });
});
