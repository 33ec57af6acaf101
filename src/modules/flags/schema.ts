import { Type, type Static } from 'typebox';
import type { FeatureFlagRow } from '../../db/schema/index.js';

/** DECISIONS 7: a lower-case letter, then 1 to 63 of lower-case letters, digits, `_`, `.`, `-`. */
export const FLAG_NAME_PATTERN = '^[a-z][a-z0-9_.-]{1,63}$';
export const MAX_DESCRIPTION_CHARS = 500;

const Timestamp = Type.String({ format: 'date-time' });

export const FlagName = Type.String({
  // The pattern bounds the length too (64): one error for a bad name, not two.
  pattern: FLAG_NAME_PATTERN,
  description: 'A lower-case letter, then 1 to 63 of `a-z`, `0-9`, `_`, `.`, `-`',
  'x-pattern-message': 'must be a lower-case letter followed by 1 to 63 of a-z, 0-9, _, . and -',
});
export const Enabled = Type.Boolean();
export const RolloutPercentage = Type.Integer({
  minimum: 0,
  maximum: 100,
  description: 'Share of users (by their bucket, DECISIONS 7) the enabled flag is on for',
});
/** Free text: tabs and line breaks allowed, other control characters and lone surrogates not. */
export const Description = Type.String({
  maxLength: MAX_DESCRIPTION_CHARS,
  pattern: '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f\\ud800-\\udfff]*$',
});

export const FlagNameParams = Type.Object({ flag_name: FlagName }, { additionalProperties: false });

export const CreateBody = Type.Object(
  {
    name: FlagName,
    enabled: Type.Optional({ ...Enabled, default: false }),
    description: Type.Optional({ ...Description, default: '' }),
    rollout_percentage: Type.Optional({ ...RolloutPercentage, default: 100 }),
  },
  { additionalProperties: false },
);

export const PatchBody = Type.Object(
  {
    enabled: Type.Optional(Enabled),
    rollout_percentage: Type.Optional(RolloutPercentage),
    description: Type.Optional(Description),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const Flag = Type.Object({
  name: Type.String(),
  enabled: Type.Boolean(),
  description: Type.String(),
  rollout_percentage: Type.Integer(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type FlagDto = Static<typeof Flag>;

export const FlagList = Type.Object({ flags: Type.Array(Flag) });

export const Evaluated = Type.Object(
  {},
  {
    additionalProperties: Type.Boolean(),
    description: 'Every flag by name: whether it is on for the caller',
  },
);

export const Message = Type.Object({ message: Type.String() });

export function toFlagDto(row: FeatureFlagRow): FlagDto {
  return {
    name: row.name,
    enabled: row.enabled,
    description: row.description,
    rollout_percentage: row.rolloutPercentage,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
