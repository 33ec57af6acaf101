import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../platform/kv.js';
import { lastGoodKey } from '../../providers/ehr/resilience.js';
import { KvLastGoodStore } from './last-good.js';
import { WriteStats } from './write-stats.js';

describe('KvLastGoodStore', () => {
  it('keeps an entry as JSON until its lifetime ends', async () => {
    let clock = 1_000;
    const kv = memoryStore(() => clock);
    const store = new KvLastGoodStore(kv);
    const key = lastGoodKey('pat-1', 'summary');
    const entry = {
      value: { patient: { id: 'pat-1' }, list: [1, 2] },
      fetchedAt: '2026-11-24T08:00:00.000Z',
    };
    await store.set(key, entry, 500);
    expect(JSON.parse((await kv.get('ehr:last-good:summary:pat-1')) ?? 'null')).toEqual(entry);
    expect(await store.get(key)).toEqual(entry);
    clock += 500;
    expect(await store.get(key)).toBeUndefined();
  });

  it('treats what is not a kept entry as absent', async () => {
    const kv = memoryStore();
    const store = new KvLastGoodStore(kv);
    for (const text of ['{truncated', 'null', '{"value":1}', '{"fetchedAt":"x"}', '[]']) {
      await kv.put('ehr:last-good:x:pat-1', text, 10_000);
      expect(await store.get('ehr:last-good:x:pat-1')).toBeUndefined();
    }
  });
});

describe('WriteStats', () => {
  const none = { flag_off: 0, patient_not_allowed: 0, invalid_input: 0 };

  it('reports nothing before the first write, then requests, success rate and mean latency', () => {
    const stats = new WriteStats();
    expect(stats.snapshot()).toEqual({
      write_requests: 0,
      write_success_rate: null,
      avg_write_latency_ms: null,
      write_refused: none,
    });
    stats.record(true, 10);
    stats.record(false, 30);
    stats.record(true, 20);
    stats.record(true, 40);
    expect(stats.snapshot()).toEqual({
      write_requests: 4,
      write_success_rate: 0.75,
      avg_write_latency_ms: 25,
      write_refused: none,
    });
  });

  it('counts refusals as requests that did not succeed, by reason, and never times them', () => {
    const stats = new WriteStats();
    stats.unsent('flag_off');
    expect(stats.snapshot()).toEqual({
      write_requests: 1,
      write_success_rate: 0,
      avg_write_latency_ms: null,
      write_refused: { ...none, flag_off: 1 },
    });
    stats.record(true, 12);
    stats.unsent('patient_not_allowed');
    stats.unsent('patient_not_allowed');
    stats.unsent('invalid_input');
    // Failed before sending, for no refusal reason (the flag could not be read).
    stats.unsent(undefined);
    expect(stats.snapshot()).toEqual({
      write_requests: 6,
      write_success_rate: 1 / 6,
      avg_write_latency_ms: 12,
      write_refused: { flag_off: 1, patient_not_allowed: 2, invalid_input: 1 },
    });
  });
});
