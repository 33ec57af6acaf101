import { Type, type Static } from 'typebox';
import type { AuditRow } from '../../db/schema/index.js';
import { validationError } from '../../errors.js';
import { Uuid } from '../users/schema.js';

/** DECISIONS 7: the most entries one page of the list holds. */
export const MAX_AUDIT_PAGE = 200;

/**
 * A dotted action name (`auth.login`, `ehr.write_failed`), or a prefix of one ending in `.*`
 * (`ehr.*`, `kb.document.*`). Checked in the service rather than as a schema pattern, so that a
 * wrong value gets a message saying what is expected.
 */
const ACTION_FILTER = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*(\.\*)?$/;
const ACTION_FILTER_MAX = 100;

const Timestamp = Type.String({ format: 'date-time' });

const Filters = {
  action: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: ACTION_FILTER_MAX,
      description:
        'Exact action (`auth.login`), or every action under a prefix when it ends in `.*` (`ehr.*` matches `ehr.read` and `ehr.write_failed`). Lower-case letters, digits and `_`, in dot-separated parts.',
    }),
  ),
  user_id: Type.Optional(
    Type.String({
      format: 'uuid',
      description:
        'Entries by this user (`actor_id`) or about this user (`resource_type` `user` and `resource_id` the id)',
    }),
  ),
  since: Type.Optional(
    Type.String({ format: 'date-time', description: 'Entries at or after this instant' }),
  ),
  until: Type.Optional(
    Type.String({ format: 'date-time', description: 'Entries at or before this instant' }),
  ),
};

export const ListQuery = Type.Object(
  {
    page: Type.Integer({ minimum: 1, maximum: 100_000, default: 1 }),
    limit: Type.Integer({ minimum: 1, maximum: MAX_AUDIT_PAGE, default: 50 }),
    ...Filters,
  },
  { additionalProperties: false },
);

export const ExportQuery = Type.Object(
  { format: Type.Unsafe<'csv'>({ type: 'string', enum: ['csv'], default: 'csv' }), ...Filters },
  { additionalProperties: false },
);

export type FilterQuery = Pick<Static<typeof ListQuery>, 'action' | 'user_id' | 'since' | 'until'>;

export const AuditEntry = Type.Object({
  id: Uuid,
  seq: Type.Integer(),
  timestamp: Timestamp,
  action: Type.String(),
  actor_id: Type.Union([Uuid, Type.Null()]),
  actor_email: Type.Union([Type.String(), Type.Null()], {
    description: 'The digest `sha256:<hex>` once the account was deleted',
  }),
  resource_type: Type.Union([Type.String(), Type.Null()]),
  resource_id: Type.Union([Type.String(), Type.Null()]),
  success: Type.Boolean(),
  ip: Type.Union([Type.String(), Type.Null()]),
  user_agent: Type.Union([Type.String(), Type.Null()]),
  request_id: Type.Union([Type.String(), Type.Null()]),
  details: Type.Object({}, { additionalProperties: true }),
  prev_hash: Type.String(),
  hash: Type.String(),
});
export type AuditEntryDto = Static<typeof AuditEntry>;

export const AuditPage = Type.Object({
  items: Type.Array(AuditEntry),
  total: Type.Integer({ minimum: 0 }),
  page: Type.Integer(),
  limit: Type.Integer(),
});

export const Verification = Type.Object({
  valid: Type.Boolean(),
  checked: Type.Integer({ minimum: 0, description: 'Entries found intact before any break' }),
  broken_at: Type.Union([
    Type.Object(
      { id: Uuid, seq: Type.Integer(), reason: Type.String() },
      {
        description:
          'The first element that fails: an entry, a tombstone, or a checkpoint (then `id` is the checkpoint’s, `seq` its head and `reason` starts with `checkpoint`)',
      },
    ),
    Type.Null(),
  ]),
  tombstones: Type.Integer({
    minimum: 0,
    description: 'Purged entries passed over through their tombstones (sequence and links)',
  }),
  checkpoints: Type.Integer({
    minimum: 0,
    description: 'Signed checkpoints of the retention purge the check relied on',
  }),
  latest_checkpoint: Type.Union([
    Type.Object({
      id: Uuid,
      created_at: Timestamp,
      through_seq: Type.Integer({ description: 'The chain’s head when the purge signed it' }),
      purged: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
        description: 'Entries that purge removed per family (`ehr`, `session`, `error`)',
      }),
    }),
    Type.Null(),
  ]),
  duration_ms: Type.Integer({ minimum: 0 }),
});

/** Which entries a list or an export covers; every part optional (all of them: every entry). */
export interface AuditFilter {
  action?: { exact: string } | { prefix: string };
  userId?: string;
  since?: Date;
  until?: Date;
}

/** The query's filters, checked beyond the schema: the action's shape, since not after until. */
export function parseFilter(query: FilterQuery): AuditFilter {
  const filter: AuditFilter = {};
  if (query.action !== undefined) {
    if (!ACTION_FILTER.test(query.action)) {
      throw validationError(
        'query.action',
        'must be a dotted action name such as auth.login, or a prefix ending in .* such as ehr.*',
      );
    }
    filter.action = query.action.endsWith('.*')
      ? { prefix: query.action.slice(0, -1) }
      : { exact: query.action };
  }
  if (query.user_id !== undefined) filter.userId = query.user_id.toLowerCase();
  if (query.since !== undefined) filter.since = instant(query.since, 'query.since');
  if (query.until !== undefined) filter.until = instant(query.until, 'query.until');
  if (filter.since !== undefined && filter.until !== undefined && filter.since > filter.until) {
    throw validationError('query.since', 'must not be after until');
  }
  return filter;
}

/** A date-time the schema let through that is still no instant (a leap second: `23:59:60Z`). */
function instant(text: string, field: string): Date {
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw validationError(field, 'is not a valid date-time');
  return date;
}

export function toAuditDto(row: AuditRow): AuditEntryDto {
  return {
    id: row.id,
    seq: row.seq,
    timestamp: row.timestamp.toISOString(),
    action: row.action,
    actor_id: row.actorId,
    actor_email: row.actorEmail,
    resource_type: row.resourceType,
    resource_id: row.resourceId,
    success: row.success,
    ip: row.ip,
    user_agent: row.userAgent,
    request_id: row.requestId,
    details: row.details,
    prev_hash: row.prevHash,
    hash: row.hash,
  };
}
