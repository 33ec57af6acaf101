import { Type } from 'typebox';
import { Envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import { callerOf, contextOf, type App } from '../../platform/http/types.js';
import type { CacheAdminService } from './cache-service.js';

const tags = ['cache'];
const admin = { config: { auth: 'admin' as const } };

const Counts = { hits: Type.Integer(), misses: Type.Integer() };
const CacheStatsSchema = Type.Object({
  redis: Type.Object({
    connected: Type.Boolean(),
    used_memory: Type.String({ description: 'Redis server memory in use, as INFO reports it' }),
    keys: Type.Integer({ description: 'Keys in the cache namespace' }),
  }),
  l1_cache: Type.Object({ size: Type.Integer(), ...Counts }, { description: 'This instance' }),
  l2_cache: Type.Object({ enabled: Type.Boolean(), ...Counts }, { description: 'This instance' }),
  regions: Type.Array(Type.Object({ name: Type.String(), size: Type.Integer(), ...Counts })),
});
const InvalidateBody = Type.Object(
  {
    pattern: Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'Redis glob over the keys of the cache namespace, e.g. `user:*`, `kb-search:*`',
    }),
  },
  { additionalProperties: false },
);

/** Spec 4.6 (DECISIONS 7). */
export function cacheRoutes(app: App, { cacheAdmin }: { cacheAdmin: CacheAdminService }): void {
  app.get(
    '/api/admin/cache/stats',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'getCacheStats',
        summary: 'Cache statistics: Redis, and this instance’s memory layer',
        response: { 200: Envelope(CacheStatsSchema) },
      },
    },
    async (request) => ok(request, await cacheAdmin.stats()),
  );

  app.post(
    '/api/admin/cache/clear',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'clearCache',
        summary: 'Empty the cache namespace in Redis and in every instance’s memory',
        response: { 200: Envelope(Type.Object({ cleared: Type.Integer() })) },
      },
    },
    async (request) =>
      ok(request, { cleared: await cacheAdmin.clear(callerOf(request), contextOf(request)) }),
  );

  app.post(
    '/api/admin/cache/invalidate',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'invalidateCache',
        summary: 'Drop the cache keys matching a glob, in Redis and in every instance’s memory',
        body: InvalidateBody,
        response: {
          200: Envelope(Type.Object({ invalidated: Type.Integer() })),
          422: errorResponse('Not a glob (e.g. an unclosed "[")'),
        },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const count = await cacheAdmin.invalidate(caller, request.body.pattern, contextOf(request));
      return ok(request, { invalidated: count });
    },
  );
}
