/** Last good answers of the EHR's reads: what the fallback serves while the EHR is away. */

/** A kept answer and when (ISO 8601) it was fetched. Values must survive JSON for a Redis store. */
export interface LastGood<T = unknown> {
  value: T;
  fetchedAt: string;
}

/** Where last good answers are kept (the lead backs this with the two-layer cache). */
export interface LastGoodStore {
  get(key: string): Promise<LastGood | undefined>;
  set(key: string, entry: LastGood, ttlMs: number): Promise<void>;
}

/** The fallback key of one kind of read (`what`: summary, labs:<code>, ...) for one patient. */
export const lastGoodKey = (patientId: string, what: string): string =>
  `ehr:last-good:${what}:${patientId}`;

/** An in-process LastGoodStore, for tests and the embedded default. */
export class MemoryLastGoodStore implements LastGoodStore {
  private readonly entries = new Map<string, { entry: LastGood; expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  get(key: string): Promise<LastGood | undefined> {
    const kept = this.entries.get(key);
    if (kept !== undefined && kept.expiresAt <= this.now()) this.entries.delete(key);
    return Promise.resolve(
      kept !== undefined && kept.expiresAt > this.now() ? kept.entry : undefined,
    );
  }

  set(key: string, entry: LastGood, ttlMs: number): Promise<void> {
    this.entries.set(key, { entry, expiresAt: this.now() + ttlMs });
    return Promise.resolve();
  }
}
