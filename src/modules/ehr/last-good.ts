import type { KeyValueStore } from '../../platform/kv.js';
import type { LastGood, LastGoodStore } from '../../providers/ehr/resilience.js';

/**
 * The last good EHR answers in the key-value store (Redis when configured, so every instance can
 * fall back to what any of them fetched), as JSON under `ehr:last-good:` keys (lastGoodKey).
 * An entry that does not parse is treated as absent.
 */
export class KvLastGoodStore implements LastGoodStore {
  constructor(private readonly kv: Pick<KeyValueStore, 'get' | 'put'>) {}

  async get(key: string): Promise<LastGood | undefined> {
    const text = await this.kv.get(key);
    if (text === undefined) return undefined;
    try {
      const entry = JSON.parse(text) as Partial<LastGood> | null;
      if (entry === null || typeof entry.fetchedAt !== 'string' || !('value' in entry)) {
        return undefined;
      }
      return { value: entry.value, fetchedAt: entry.fetchedAt };
    } catch {
      return undefined;
    }
  }

  async set(key: string, entry: LastGood, ttlMs: number): Promise<void> {
    await this.kv.put(key, JSON.stringify(entry), ttlMs);
  }
}
