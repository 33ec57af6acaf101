import type { KeyValueStore, LeasePlace } from './kv.js';
import type { Logger } from './logger.js';

/**
 * A held place in a set of leases (`KeyValueStore.lease`) that renews itself every third of its
 * lifetime while the process lives, so a crashed instance's places are freed within `ttlMs`. A
 * place lost meanwhile (the store restarted empty, or was out of reach past `ttlMs`) is taken
 * again at its old order at the next renewal.
 */
export class Lease {
  private timer: NodeJS.Timeout | undefined;
  private released = false;
  /** The renewal under way: a release waits for it, so it cannot put the place back. */
  private renewing: Promise<number> | undefined;
  /** When the last renewal found the place lost (undefined: never). */
  lostAt: number | undefined;
  /** Called when a renewal took back a lost place: what was kept beside it is gone too. */
  onRestored: (() => void) | undefined;

  private constructor(
    private readonly kv: KeyValueStore,
    readonly key: string,
    readonly member: string,
    readonly ttlMs: number,
    private place: LeasePlace,
    private readonly log: Logger,
  ) {
    this.timer = setInterval(() => {
      this.renew().catch((err: unknown) => {
        // Debug only: while the store is away every lease fails each round (it is reported elsewhere).
        log.debug({ err, key: this.key }, 'a lease could not be renewed; it is tried again');
      });
    }, ttlMs / 3);
    this.timer.unref();
  }

  /** Takes a place, or undefined when the set already holds `capacity` members. */
  static async take(
    kv: KeyValueStore,
    key: string,
    member: string,
    ttlMs: number,
    capacity: number | undefined,
    log: Logger,
  ): Promise<Lease | undefined> {
    const place = await kv.lease(key, member, ttlMs, capacity === undefined ? {} : { capacity });
    return place === undefined ? undefined : new Lease(kv, key, member, ttlMs, place, log);
  }

  /** How many are ahead, as last seen. */
  get rank(): number {
    return this.place.rank;
  }

  /** Renews the place (taking it again at its old order when it was lost); returns its rank. */
  renew(): Promise<number> {
    if (this.released) return Promise.resolve(this.place.rank);
    this.renewing ??= this.renewOnce().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  private async renewOnce(): Promise<number> {
    const place = await this.kv.lease(this.key, this.member, this.ttlMs, {
      order: this.place.order,
    });
    // Renewal is never refused (no capacity), so a place is always returned.
    if (place === undefined) return this.place.rank;
    this.place = place;
    if (!place.renewed) {
      this.lostAt = Date.now();
      this.onRestored?.();
    }
    return place.rank;
  }

  /** Gives the place up; a store out of reach lets it expire instead. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.renewing?.catch(() => undefined);
    await this.kv.dropLease(this.key, this.member).catch((err: unknown) => {
      this.log.warn({ err, key: this.key }, 'a lease could not be released; it expires instead');
    });
  }
}
