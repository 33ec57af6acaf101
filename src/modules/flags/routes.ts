import { Envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import { callerOf, contextOf, type App } from '../../platform/http/types.js';
import {
  CreateBody,
  Evaluated,
  Flag,
  FlagList,
  FlagNameParams,
  Message,
  PatchBody,
  toFlagDto,
} from './schema.js';
import type { FlagsService } from './service.js';

const tags = ['feature-flags'];
const notFound = { 404: errorResponse('No such feature flag') };
const BASE = '/api/admin/feature-flags';

/** Spec 4.7 and DECISIONS 7: administrators manage the flags; every user reads their own values. */
export function flagsRoutes(app: App, { flags }: { flags: FlagsService }): void {
  const admin = { config: { auth: 'admin' as const } };

  app.get(
    '/api/feature-flags',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        operationId: 'evaluateFeatureFlags',
        summary: 'Every flag, evaluated for the caller',
        description:
          'A disabled flag is off for everyone; an enabled one is on when the caller’s bucket, `uint32_be(sha256(flag_name + ":" + user_id)[0..4]) % 100`, is below `rollout_percentage`.',
        response: { 200: Envelope(Evaluated) },
      },
    },
    async (request) => ok(request, await flags.evaluate(callerOf(request).id)),
  );

  app.get(
    BASE,
    {
      ...admin,
      schema: {
        tags,
        operationId: 'listFeatureFlags',
        summary: 'Every feature flag, by name',
        response: { 200: Envelope(FlagList) },
      },
    },
    async (request) => ok(request, { flags: (await flags.list()).map(toFlagDto) }),
  );

  app.get(
    `${BASE}/:flag_name`,
    {
      ...admin,
      schema: {
        tags,
        operationId: 'getFeatureFlag',
        summary: 'One feature flag',
        params: FlagNameParams,
        response: { 200: Envelope(Flag), ...notFound },
      },
    },
    async (request) => ok(request, toFlagDto(await flags.get(request.params.flag_name))),
  );

  app.post(
    BASE,
    {
      ...admin,
      schema: {
        tags,
        operationId: 'createFeatureFlag',
        summary: 'Create a feature flag',
        description:
          'Defaults: `enabled` false, `description` empty, `rollout_percentage` 100. A taken name is a 409.',
        body: CreateBody,
        response: { 201: Envelope(Flag), 409: errorResponse('The name is taken') },
      },
    },
    async (request, reply) => {
      const { name, enabled, description, rollout_percentage } = request.body;
      const input = {
        name,
        enabled: enabled ?? false,
        description: description ?? '',
        rolloutPercentage: rollout_percentage ?? 100,
      };
      const row = await flags.create(callerOf(request), input, contextOf(request));
      return reply.code(201).send(ok(request, toFlagDto(row)));
    },
  );

  app.patch(
    `${BASE}/:flag_name`,
    {
      ...admin,
      schema: {
        tags,
        operationId: 'updateFeatureFlag',
        summary: 'Change any of enabled, rollout_percentage, description',
        description:
          'At least one field. Values equal to the stored ones change nothing (no audit entry, `updated_at` kept).',
        params: FlagNameParams,
        body: PatchBody,
        response: { 200: Envelope(Flag), ...notFound },
      },
    },
    async (request) => {
      const { enabled, description, rollout_percentage } = request.body;
      const row = await flags.update(
        callerOf(request),
        request.params.flag_name,
        {
          ...(enabled === undefined ? {} : { enabled }),
          ...(description === undefined ? {} : { description }),
          ...(rollout_percentage === undefined ? {} : { rolloutPercentage: rollout_percentage }),
        },
        contextOf(request),
      );
      return ok(request, toFlagDto(row));
    },
  );

  app.delete(
    `${BASE}/:flag_name`,
    {
      ...admin,
      schema: {
        tags,
        operationId: 'deleteFeatureFlag',
        summary: 'Delete a feature flag (it is then off for everyone)',
        params: FlagNameParams,
        response: { 200: Envelope(Message), ...notFound },
      },
    },
    async (request) => {
      await flags.delete(callerOf(request), request.params.flag_name, contextOf(request));
      return ok(request, { message: 'Feature flag deleted' });
    },
  );

  app.post(
    `${BASE}/:flag_name/toggle`,
    {
      ...admin,
      schema: {
        tags,
        operationId: 'toggleFeatureFlag',
        summary: 'Flip enabled',
        description: 'Atomic: two concurrent toggles flip the flag twice.',
        params: FlagNameParams,
        response: { 200: Envelope(Flag), ...notFound },
      },
    },
    async (request) => {
      const row = await flags.toggle(
        callerOf(request),
        request.params.flag_name,
        contextOf(request),
      );
      return ok(request, toFlagDto(row));
    },
  );
}
