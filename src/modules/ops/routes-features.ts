import { validationError } from '../../errors.js';
import { Envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import { callerOf, contextOf, type App } from '../../platform/http/types.js';
import { bucketOf, isOnFor } from '../flags/bucket.js';
import { toFlagDto } from '../flags/schema.js';
import { opsTags, type OpsDeps } from './deps.js';
import {
  AbVariant,
  AbVariantQuery,
  FeatureBatch,
  FeatureBatchAnswer,
  FeatureList,
  FeatureUpdate,
} from './schema.js';

const admin = { auth: 'admin' as const };
const notFound = { 404: errorResponse('A named feature flag does not exist; nothing changed') };

/**
 * Spec 4.11: the operators' switchboard over the feature flags (the same flags as
 * `/api/admin/feature-flags`, each change audited there as `flag.updated`), and the A/B bucket of
 * a user (DECISIONS 7).
 */
export function opsFeatureRoutes(app: App, deps: OpsDeps): void {
  const tags = opsTags.features;
  const { flags } = deps;

  app.get(
    '/api/admin/features',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'listFeatures',
        summary: 'Every feature flag, as stored',
        response: { 200: Envelope(FeatureList) },
      },
    },
    async (request) => {
      const rows = await flags.list();
      return ok(request, { items: rows.map(toFlagDto), total: rows.length });
    },
  );

  app.post(
    '/api/admin/features',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'setFeature',
        summary: 'Switches one feature flag on or off',
        description:
          'The flag must exist (create flags with `POST /api/admin/feature-flags` on the API port): an unknown name is a 404, so a typo never creates a flag. Setting the value it already has changes nothing and is not audited.',
        body: FeatureUpdate,
        response: { 200: Envelope(FeatureBatchAnswer), ...notFound },
      },
    },
    async (request) => {
      const { feature, enabled } = request.body;
      return ok(request, await apply(deps, request, [{ feature, enabled }]));
    },
  );

  app.post(
    '/api/admin/features/batch',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'setFeatures',
        summary: 'Switches several feature flags at once: all of them or none',
        description:
          'One transaction: when any named flag does not exist, the answer is 404 and no flag changes. A flag named twice is a 422.',
        body: FeatureBatch,
        response: { 200: Envelope(FeatureBatchAnswer), ...notFound },
      },
    },
    async (request) => {
      const { updates } = request.body;
      const seen = new Set<string>();
      updates.forEach((u, i) => {
        if (seen.has(u.feature)) {
          throw validationError(
            `body.updates.${String(i)}.feature`,
            'names a flag already in the batch',
          );
        }
        seen.add(u.feature);
      });
      return ok(request, await apply(deps, request, updates));
    },
  );

  app.get(
    '/api/admin/ab-variant',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'getAbVariant',
        summary: 'Which variant of an A/B test (a feature flag) a user is in',
        description:
          '`bucket` is `uint32_be(sha256(test + ":" + user_id)[0..4]) % 100`; the user is in `treatment` when the flag is enabled and the bucket is below its rollout percentage, else in `control`. A test with no flag of that name answers `control` with `flag_exists: false`.',
        querystring: AbVariantQuery,
        response: { 200: Envelope(AbVariant) },
      },
    },
    async (request) => {
      const { user_id, test } = request.query;
      const userId = user_id.toLowerCase();
      const flag = (await flags.list()).find((f) => f.name === test);
      const enabled = flag !== undefined && isOnFor(flag, userId);
      return ok(request, {
        user_id: userId,
        test,
        bucket: bucketOf(test, userId),
        variant: enabled ? ('treatment' as const) : ('control' as const),
        enabled,
        flag_exists: flag !== undefined,
        rollout_percentage: flag?.rolloutPercentage ?? null,
      });
    },
  );
}

async function apply(
  deps: OpsDeps,
  request: Parameters<typeof callerOf>[0],
  updates: readonly { feature: string; enabled: boolean }[],
) {
  const caller = callerOf(request);
  const { rows, changed } = await deps.flags.setEnabled(
    { id: caller.id, email: caller.email },
    updates.map((u) => ({ name: u.feature, enabled: u.enabled })),
    contextOf(request),
  );
  return { items: rows.map(toFlagDto), changed };
}
