import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { AppError } from '../errors.js';
import type { Logger } from './logger.js';
import type { OutageNotice } from './outages.js';
import type { KeyValueStore } from './kv.js';

export interface RateLimitRule {
  /** Names the counter, e.g. `login`. */
  name: string;
  max: number;
  windowSeconds: number;
}

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the window ends. */
  resetAt: number;
}

/** Hits this instance reserved in one window for one rule and client. */
interface Lease {
  /** The shared count after this instance's latest reservation. */
  count: number;
  /** Hits of its reservations this instance may admit, and how many it has admitted. */
  granted: number;
  used: number;
  /** End of the window (ms): the lease is worthless afterwards. */
  expiresAt: number;
}

/** Where one hit falls: the counter's key, and its window. */
interface Slot {
  key: string;
  now: number;
  windowMs: number;
  expiresAt: number;
}

/** A reservation on its way to the store, and the requests waiting for a share of it. */
interface Flight {
  /** Hits claimed from it by requests waiting for it to land. */
  claims: number;
  landed: Promise<Landed | null>;
}

interface Landed {
  lease: Lease;
  /** Hits of this reservation under the limit. */
  granted: number;
}

/** Leases kept at most; beyond that expired ones are dropped, or all (only costing store calls). */
const MAX_LEASES = 10_000;

/**
 * How many hits one store call reserves: 1 (an exact count) below 2000 per window, else 0.1% of the
 * limit, at most 1000. Hits reserved by one instance and not used count against the client on the
 * others; as the next lease is reserved while half of the current one is left, a client may be
 * refused at most one and a half leases (0.15% of the limit) early per instance. The limit itself
 * is never exceeded. A lease must outlast a store round trip of a busy client (at 50 concurrent
 * requests, 64 did not: most requests waited for the store), hence the high cap.
 */
export const leaseSize = (max: number): number =>
  Math.max(1, Math.min(1000, Math.floor(max / 1000)));

/**
 * Fixed windows aligned to the epoch, counted per client IP in the shared store, so every instance
 * on one Redis shares one count and agrees on when it resets. Large limits are counted in leases
 * (see leaseSize) so that a busy client does not cost a store call per request, and the next lease
 * is reserved before the current one runs out, so that its requests do not wait for the store; a
 * client over the limit is refused without a store call for the rest of the window, as counts only
 * grow within it.
 */
export class RateLimiter {
  private readonly leases = new Map<string, Lease>();
  private readonly flights = new Map<string, Flight>();

  constructor(
    private readonly store: KeyValueStore,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    /** Told of a store failure first: a lost Redis is logged there once, not per request. */
    private readonly outages?: OutageNotice,
  ) {}

  async hit(rule: RateLimitRule, clientKey: string): Promise<RateLimitResult | null> {
    const at = this.at(rule, clientKey);
    return this.fromLease(rule, at) ?? (await this.reserve(rule, at));
  }

  private at(rule: RateLimitRule, clientKey: string): Slot {
    const windowMs = rule.windowSeconds * 1000;
    const now = this.now();
    const window = Math.floor(now / windowMs);
    return {
      key: `rl:${rule.name}:${clientKey}:${window}`,
      now,
      windowMs,
      expiresAt: (window + 1) * windowMs,
    };
  }

  /** The answer from this instance's lease, when it can give one without the store. */
  private fromLease(rule: RateLimitRule, at: Slot): RateLimitResult | undefined {
    const held = this.leases.get(at.key);
    if (held === undefined) return undefined;
    if (held.used < held.granted) {
      held.used += 1;
      this.refillEarly(rule, at, held);
      return this.result(rule, held, true);
    }
    // Counts only grow within a window: once at the limit, the client stays refused.
    return held.count >= rule.max ? this.result(rule, held, false) : undefined;
  }

  /**
   * Half of the lease left: reserves the next one now, so that requests keep being answered from
   * the lease instead of waiting (all of them, at high rates) for a store round trip.
   */
  private refillEarly(rule: RateLimitRule, at: Slot, lease: Lease): void {
    const size = leaseSize(rule.max);
    if (
      size > 1 &&
      (lease.granted - lease.used) * 2 <= size &&
      lease.count < rule.max &&
      !this.flights.has(at.key)
    ) {
      this.fly(rule, at, size);
    }
  }

  private async reserve(rule: RateLimitRule, at: Slot): Promise<RateLimitResult | null> {
    const size = leaseSize(rule.max);
    // A reservation of this counter in flight with room left: take a seat instead of reserving
    // again, so that unused reserved hits stay within the bound of leaseSize.
    const boarding = size > 1 ? this.flights.get(at.key) : undefined;
    const flight =
      boarding !== undefined && boarding.claims < size ? boarding : this.fly(rule, at, size);
    const seat = flight.claims++;
    const landed = await flight.landed;
    if (landed === null) return null;
    return this.result(rule, landed.lease, seat < landed.granted);
  }

  /** Starts one store call reserving `size` hits; requests may board it until it lands. */
  private fly(rule: RateLimitRule, at: Slot, size: number): Flight {
    const flight: Flight = { claims: 0, landed: Promise.resolve(null) };
    if (size > 1) this.flights.set(at.key, flight);
    flight.landed = this.land(rule, at, size, flight);
    return flight;
  }

  private async land(
    rule: RateLimitRule,
    at: Slot,
    size: number,
    flight: Flight,
  ): Promise<Landed | null> {
    let count: number;
    try {
      count = await this.store.increment(at.key, at.windowMs, size);
    } catch (err) {
      this.landed(at.key, flight);
      // The limiter fails open: an unreachable Redis must not take logins down with it
      // (lockout per account still lives in the database). /ready reports the outage.
      if (flight.claims > 0 && this.outages?.noticed(err) !== true) {
        this.log.warn({ err, limit: rule.name }, 'rate limit store unavailable; request allowed');
      }
      return null;
    }
    this.landed(at.key, flight);
    // This instance now holds counts count - size + 1 .. count; those up to the limit are hits.
    const granted = Math.max(0, Math.min(size, rule.max - (count - size)));
    // Requests reserving their own hits meanwhile (leases of 1) share the one lease.
    const lease = this.leases.get(at.key) ?? {
      count: 0,
      granted: 0,
      used: 0,
      expiresAt: at.expiresAt,
    };
    lease.count = Math.max(lease.count, count);
    lease.granted += granted;
    // The boarded requests' hits are taken here, at once, before any other request can see them.
    lease.used += Math.min(granted, flight.claims);
    if (lease.used < lease.granted || lease.count >= rule.max) this.keep(at.key, lease, at.now);
    if (flight.claims > 0) this.refillEarly(rule, at, lease);
    return { lease, granted };
  }

  private landed(key: string, flight: Flight): void {
    if (this.flights.get(key) === flight) this.flights.delete(key);
  }

  private result(rule: RateLimitRule, lease: Lease, allowed: boolean): RateLimitResult {
    // Hits reserved but not yet used by this instance are not spent.
    const spent = lease.count - (lease.granted - lease.used);
    return {
      allowed,
      limit: rule.max,
      remaining: Math.max(0, rule.max - spent),
      resetAt: lease.expiresAt / 1000,
    };
  }

  private keep(key: string, lease: Lease, now: number): void {
    if (!this.leases.has(key) && this.leases.size >= MAX_LEASES) {
      for (const [k, l] of this.leases) if (l.expiresAt <= now) this.leases.delete(k);
      if (this.leases.size >= MAX_LEASES) this.leases.clear();
    }
    this.leases.set(key, lease);
  }

  /**
   * An onRequest hook enforcing `rule` and sending the X-RateLimit-* headers, in callback style:
   * when this instance's lease answers, the request goes on at once, without a promise (an async
   * hook measurably slows every request).
   */
  onRequest(rule: RateLimitRule, onLimited: (rule: RateLimitRule) => void): onRequestHookHandler {
    return (request, reply, done) => {
      const at = this.at(rule, request.ip);
      const local = this.fromLease(rule, at);
      if (local !== undefined) {
        done(this.enforce(rule, local, reply, onLimited));
        return;
      }
      this.reserve(rule, at).then((result) => {
        done(this.enforce(rule, result, reply, onLimited));
      }, done);
    };
  }

  /** The same hook as a function returning a promise. */
  hook(rule: RateLimitRule, onLimited: (rule: RateLimitRule) => void) {
    return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const result = await this.hit(rule, request.ip);
      const refusal = this.enforce(rule, result, reply, onLimited);
      if (refusal !== undefined) throw refusal;
    };
  }

  /** Sends the headers; returns the 429 error when the hit is refused. */
  private enforce(
    rule: RateLimitRule,
    result: RateLimitResult | null,
    reply: FastifyReply,
    onLimited: (rule: RateLimitRule) => void,
  ): AppError | undefined {
    if (result === null) return undefined;
    void reply.headers({
      'x-ratelimit-limit': result.limit,
      'x-ratelimit-remaining': result.remaining,
      'x-ratelimit-reset': Math.ceil(result.resetAt),
    });
    if (result.allowed) return undefined;
    onLimited(rule);
    const retryAfter = Math.max(1, Math.ceil(result.resetAt - this.now() / 1000));
    return new AppError(
      'RATE_LIMITED',
      `Too many requests; try again in ${retryAfter} s`,
      { limit: result.limit, window_seconds: rule.windowSeconds },
      { 'retry-after': String(retryAfter) },
    );
  }
}
