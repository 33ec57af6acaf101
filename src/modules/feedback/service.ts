import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Db } from '../../db/client.js';
import type { FeedbackRow } from '../../db/schema/index.js';
import type { AuditService, RequestContext } from '../audit/service.js';
import type { SelfActor } from '../users/service.js';
import { feedbackCsv } from './export.js';
import { feedbackRepo, type FeedbackWindow } from './repo.js';
import { FEEDBACK_CATEGORIES, type FeedbackCategory, type SummaryDto } from './schema.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface FeedbackInput {
  sessionId: string;
  rating: number;
  category: FeedbackCategory;
  comments?: string | null | undefined;
}

/**
 * Feedback of users on their voice and chat sessions (spec 4.9, DECISIONS 7), and the
 * administrators' summary and export of it. A window of `days` is the last `days` × 24 hours up to
 * the call, on the service's clock (which also stamps the rows).
 */
export class FeedbackService {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Stores the feedback under its author; blank comments are stored as none. */
  async submit(userId: string, input: FeedbackInput): Promise<FeedbackRow> {
    const comments = input.comments ?? null;
    return feedbackRepo.insert(this.db, {
      id: randomUUID(),
      userId,
      sessionId: input.sessionId,
      rating: input.rating,
      category: input.category,
      comments: comments === null || comments.trim() === '' ? null : comments,
      createdAt: this.now(),
    });
  }

  /** Count, mean and the counts per category and rating, with every category and rating named. */
  async summary(days: number): Promise<SummaryDto> {
    const row = await feedbackRepo.summary(this.db, this.window(days).since);
    const byCategory: Record<string, number> = Object.fromEntries(
      FEEDBACK_CATEGORIES.map((c) => [c, 0]),
    );
    Object.assign(byCategory, row.by_category);
    return {
      days,
      count: row.count,
      average_rating: row.count === 0 ? null : row.average_rating,
      by_category: byCategory as SummaryDto['by_category'],
      by_rating: { '1': row.r1, '2': row.r2, '3': row.r3, '4': row.r4, '5': row.r5 },
    };
  }

  /** The window's feedback as a CSV stream, and the file name to offer (the day of the export). */
  async exportCsv(
    actor: SelfActor,
    days: number,
    ctx: RequestContext,
  ): Promise<{ filename: string; stream: Readable }> {
    const window = this.window(days);
    // Who took a copy of the users' feedback is recorded before the first row leaves.
    await this.audit.record(
      {
        action: 'feedback.exported',
        success: true,
        actorId: actor.id,
        actorEmail: actor.email,
        resourceType: 'feedback',
        resourceId: null,
        details: { days },
      },
      ctx,
    );
    const date = window.until.toISOString().slice(0, 10);
    return { filename: `feedback-${date}.csv`, stream: await feedbackCsv(this.db, window) };
  }

  private window(days: number): FeedbackWindow {
    const until = this.now();
    return { since: new Date(until.getTime() - days * DAY_MS), until };
  }
}
