import { serviceUnavailable, validationError } from '../../errors.js';
import { GlobError } from '../../platform/glob.js';
import type { CacheStats, LayeredCache } from '../../platform/layered-cache.js';
import type { AuditService, RequestContext } from '../audit/service.js';
import type { SelfActor } from '../users/service.js';

/** Spec 4.6 and DECISIONS 7: the administrators' view of the two-layer cache. */
export class CacheAdminService {
  constructor(
    private readonly cache: LayeredCache,
    private readonly audit: AuditService,
  ) {}

  stats(): Promise<CacheStats> {
    return this.cache.stats();
  }

  /** Empties the cache namespace everywhere; audited with the number of keys removed. */
  async clear(actor: SelfActor, ctx: RequestContext): Promise<number> {
    const cleared = await this.cache.clear().catch(redisDown);
    await this.audit.record(this.event('cache.cleared', actor, { cleared }), ctx);
    return cleared;
  }

  /** Drops the keys matching a Redis-style glob everywhere; audited with pattern and count. */
  async invalidate(actor: SelfActor, pattern: string, ctx: RequestContext): Promise<number> {
    let invalidated: number;
    try {
      invalidated = await this.cache.invalidate(pattern);
    } catch (err) {
      if (err instanceof GlobError) throw validationError('body.pattern', err.message);
      return redisDown(err);
    }
    const details = { pattern, invalidated };
    await this.audit.record(this.event('cache.invalidated', actor, details), ctx);
    return invalidated;
  }

  private event(action: string, actor: SelfActor, details: Record<string, unknown>) {
    return {
      action,
      success: true,
      actorId: actor.id,
      actorEmail: actor.email,
      resourceType: 'cache',
      resourceId: null,
      details,
    };
  }
}

/**
 * Redis failed part-way: every instance's memory was told to drop the keys, but Redis may still
 * hold some, so the administrator hears that the request did not complete.
 */
function redisDown(err: unknown): never {
  throw Object.assign(
    serviceUnavailable('Redis did not answer; the keys in Redis may not all be removed: try again'),
    { cause: err },
  );
}
