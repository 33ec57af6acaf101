import { Type, type Static } from 'typebox';
import type { FeedbackRow } from '../../db/schema/index.js';
import { VisibleText } from '../../platform/http/text.js';
import { Uuid } from '../users/schema.js';

/**
 * The categories feedback is filed under: a closed list, so the summary's buckets stay few and
 * fixed and a typo is a 422 rather than a bucket of its own; what fits none goes under `other`
 * with the details in `comments`. A new category is a change here (no migration: the column is
 * text).
 */
export const FEEDBACK_CATEGORIES = [
  'answer_quality',
  'voice_quality',
  'speech_recognition',
  'latency',
  'other',
] as const;
export type FeedbackCategory = (typeof FEEDBACK_CATEGORIES)[number];

export const RATINGS = [1, 2, 3, 4, 5] as const;
export const MAX_COMMENTS_CHARS = 4000;

const Timestamp = Type.String({ format: 'date-time' });

/** The client's reference to the voice or chat session: one line of visible text. */
export const SessionId = VisibleText(128);
export const Category = Type.Unsafe<FeedbackCategory>({
  type: 'string',
  enum: [...FEEDBACK_CATEGORIES],
});
export const Rating = Type.Integer({ minimum: 1, maximum: 5 });
/** Free text: tabs and line breaks allowed, other control characters and lone surrogates not. */
export const Comments = Type.String({
  maxLength: MAX_COMMENTS_CHARS,
  pattern: '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f\\ud800-\\udfff]*$',
});

export const SubmitBody = Type.Object(
  {
    session_id: SessionId,
    rating: Rating,
    category: Category,
    comments: Type.Optional(
      Type.Union([Comments, Type.Null()], {
        description: 'Optional; empty or blank comments are stored as null',
      }),
    ),
  },
  { additionalProperties: false },
);

export const Feedback = Type.Object({
  id: Uuid,
  session_id: Type.String(),
  rating: Type.Integer(),
  category: Type.String(),
  comments: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
});
export type FeedbackDto = Static<typeof Feedback>;

const Days = Type.Integer({
  minimum: 1,
  maximum: 365,
  default: 30,
  description: 'The window: the last `days` × 24 hours up to the request',
});

export const SummaryQuery = Type.Object({ days: Days }, { additionalProperties: false });

export const ExportQuery = Type.Object(
  {
    format: Type.Unsafe<'csv'>({ type: 'string', enum: ['csv'], default: 'csv' }),
    days: Days,
  },
  { additionalProperties: false },
);

const Count = Type.Integer({ minimum: 0 });

export const Summary = Type.Object({
  days: Type.Integer(),
  count: Count,
  average_rating: Type.Union([Type.Number(), Type.Null()], {
    description: 'Mean rating rounded to two decimals; null when there is no feedback',
  }),
  by_category: Type.Object(
    Object.fromEntries(FEEDBACK_CATEGORIES.map((c) => [c, Count])) as Record<
      FeedbackCategory,
      typeof Count
    >,
    { additionalProperties: Count, description: 'Every category, zeros included' },
  ),
  by_rating: Type.Object(
    Object.fromEntries(RATINGS.map((r) => [String(r), Count])) as Record<
      '1' | '2' | '3' | '4' | '5',
      typeof Count
    >,
    { additionalProperties: false, description: 'Every rating from 1 to 5, zeros included' },
  ),
});
export type SummaryDto = Static<typeof Summary>;

export function toFeedbackDto(row: FeedbackRow): FeedbackDto {
  return {
    id: row.id,
    session_id: row.sessionId,
    rating: row.rating,
    category: row.category,
    comments: row.comments,
    created_at: row.createdAt.toISOString(),
  };
}
