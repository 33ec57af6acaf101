import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Logger } from './logger.js';
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

/**
 * Fixed windows aligned to the epoch, counted per client IP in the shared store, so every instance
 * on one Redis shares one count and agrees on when it resets.
 */
export class RateLimiter {
  constructor(
    private readonly store: KeyValueStore,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  async hit(rule: RateLimitRule, clientKey: string): Promise<RateLimitResult | null> {
    const windowMs = rule.windowSeconds * 1000;
    const window = Math.floor(this.now() / windowMs);
    const resetAt = ((window + 1) * windowMs) / 1000;
    let count: number;
    try {
      count = await this.store.increment(`rl:${rule.name}:${clientKey}:${window}`, windowMs);
    } catch (err) {
      // The limiter fails open: an unreachable Redis must not take logins down with it
      // (lockout per account still lives in the database). /ready reports the outage.
      this.log.warn({ err, limit: rule.name }, 'rate limit store unavailable; request allowed');
      return null;
    }
    return {
      allowed: count <= rule.max,
      limit: rule.max,
      remaining: Math.max(0, rule.max - count),
      resetAt,
    };
  }

  /** An onRequest hook enforcing `rule` and sending the X-RateLimit-* headers. */
  hook(rule: RateLimitRule, onLimited: (rule: RateLimitRule) => void) {
    return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const result = await this.hit(rule, request.ip);
      if (result === null) return;
      void reply.headers({
        'x-ratelimit-limit': result.limit,
        'x-ratelimit-remaining': result.remaining,
        'x-ratelimit-reset': Math.ceil(result.resetAt),
      });
      if (!result.allowed) {
        onLimited(rule);
        const retryAfter = Math.max(1, Math.ceil(result.resetAt - this.now() / 1000));
        throw new AppError(
          'RATE_LIMITED',
          `Too many requests; try again in ${retryAfter} s`,
          { limit: result.limit, window_seconds: rule.windowSeconds },
          { 'retry-after': String(retryAfter) },
        );
      }
    };
  }
}
