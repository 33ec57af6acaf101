import type { preHandlerAsyncHookHandler } from 'fastify';
import { AppError } from '../../errors.js';
import { CsvFileResponse, sendCsvFile } from '../../platform/http/csv-file.js';
import { Envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import { callerOf, contextOf, type App } from '../../platform/http/types.js';
import type { RateLimiter, RateLimitRule } from '../../platform/rate-limit.js';
import { EXPORT_COLUMNS } from './export.js';
import {
  ExportQuery,
  Feedback,
  SubmitBody,
  Summary,
  SummaryQuery,
  toFeedbackDto,
} from './schema.js';
import type { FeedbackService } from './service.js';

const tags = ['feedback'];

/**
 * Submissions per user (not per IP: users behind one clinic's proxy share an address) in a fixed
 * hour: far above what a person rating their sessions sends, low enough that a script cannot
 * flood the table. Counted once the request is authenticated and valid, so a refused request
 * costs nothing.
 */
export const FEEDBACK_LIMIT: RateLimitRule = { name: 'feedback', max: 30, windowSeconds: 3600 };

export interface FeedbackRouteDeps {
  feedback: FeedbackService;
  /** null when rate limits are switched off. */
  rateLimiter: RateLimiter | null;
  onLimited(rule: RateLimitRule): void;
}

/** The caller's submissions within FEEDBACK_LIMIT, with the X-RateLimit-* headers. */
function perUserLimit(deps: FeedbackRouteDeps): preHandlerAsyncHookHandler {
  return async (request, reply) => {
    if (deps.rateLimiter === null) return;
    const rule = FEEDBACK_LIMIT;
    const result = await deps.rateLimiter.hit(rule, `user:${callerOf(request).id}`);
    if (result === null) return;
    void reply.headers({
      'x-ratelimit-limit': result.limit,
      'x-ratelimit-remaining': result.remaining,
      'x-ratelimit-reset': Math.ceil(result.resetAt),
    });
    if (result.allowed) return;
    deps.onLimited(rule);
    const retryAfter = Math.max(1, Math.ceil(result.resetAt - Date.now() / 1000));
    throw new AppError(
      'RATE_LIMITED',
      `At most ${String(rule.max)} feedback submissions an hour; try again in ${String(retryAfter)} s`,
      { limit: result.limit, window_seconds: rule.windowSeconds },
      { 'retry-after': String(retryAfter) },
    );
  };
}

/** Spec 4.9 and DECISIONS 7: users submit; administrators read the summary and the export. */
export function feedbackRoutes(app: App, deps: FeedbackRouteDeps): void {
  const { feedback } = deps;

  app.post(
    '/api/feedback',
    {
      config: { auth: 'user' },
      preHandler: perUserLimit(deps),
      schema: {
        tags,
        operationId: 'submitFeedback',
        summary: 'Rate a voice or chat session',
        description: `Stored under the caller. \`session_id\` is the client's reference to the session and is stored as given. At most ${String(FEEDBACK_LIMIT.max)} submissions per user an hour.`,
        body: SubmitBody,
        response: {
          201: Envelope(Feedback),
          429: errorResponse(`More than ${String(FEEDBACK_LIMIT.max)} submissions in the hour`),
        },
      },
    },
    async (request, reply) => {
      const { session_id, rating, category, comments } = request.body;
      const row = await feedback.submit(callerOf(request).id, {
        sessionId: session_id,
        rating,
        category,
        comments,
      });
      return reply.code(201).send(ok(request, toFeedbackDto(row)));
    },
  );

  app.get(
    '/api/admin/feedback/summary',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'getFeedbackSummary',
        summary: 'Count, mean rating and counts per category and rating over the last `days`',
        querystring: SummaryQuery,
        response: { 200: Envelope(Summary) },
      },
    },
    async (request) => ok(request, await feedback.summary(request.query.days)),
  );

  app.get(
    '/api/admin/feedback/export',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'exportFeedback',
        summary: 'Feedback of the last `days` as a CSV file, oldest first (streamed)',
        description: `UTF-8 CSV (RFC 4180, CRLF) with the header row \`${EXPORT_COLUMNS.join(',')}\`. A text cell starting with \`=\`, \`+\`, \`-\`, \`@\`, tab or carriage return is prefixed with a single quote so that spreadsheets do not run it as a formula.`,
        querystring: ExportQuery,
        response: {
          200: CsvFileResponse,
        },
      },
    },
    async (request, reply) => {
      const { filename, stream } = await feedback.exportCsv(
        callerOf(request),
        request.query.days,
        contextOf(request),
      );
      return sendCsvFile(reply, filename, stream);
    },
  );
}
