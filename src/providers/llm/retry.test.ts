import { describe, expect, it } from 'vitest';
import { retryDelay, streamWithRetry, type RetryOptions } from './retry.js';
import { ProviderError, type LlmEvent, type LlmProvider, type LlmRequest } from './types.js';

/** A provider double: each call to `stream` plays the next script (events, then maybe a throw). */
function fakeProvider(scripts: { events?: LlmEvent[]; error?: Error }[]) {
  const calls: AbortSignal[] = [];
  const provider: LlmProvider = {
    name: 'fake',
    model: 'fake-1',
    async *stream(_request, { signal }) {
      calls.push(signal);
      const script = scripts[calls.length - 1] ?? {};
      await Promise.resolve();
      for (const event of script.events ?? []) yield event;
      if (script.error !== undefined) throw script.error;
    },
  };
  return { provider, calls };
}

const request: LlmRequest = { messages: [{ role: 'user', content: 'q' }], passages: [], tools: [] };
const retryable = (status = 503, retryAfterMs?: number) =>
  new ProviderError('fake', `HTTP ${status}`, {
    retryable: true,
    status,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
const final = () => new ProviderError('fake', 'HTTP 400', { retryable: false, status: 400 });
const answer: LlmEvent[] = [
  { type: 'text_delta', text: 'ok [1]' },
  { type: 'done', finishReason: 'stop' },
];

async function collect(events: AsyncIterable<LlmEvent>) {
  const seen: LlmEvent[] = [];
  try {
    for await (const event of events) seen.push(event);
    return { events: seen, error: undefined as unknown };
  } catch (error) {
    return { events: seen, error };
  }
}

function options(extra: Partial<RetryOptions> = {}) {
  const retries: [ProviderError, number][] = [];
  const opts: RetryOptions = {
    signal: new AbortController().signal,
    attempts: 3,
    backoffMs: 1,
    onRetry: (err, attempt) => retries.push([err, attempt]),
    ...extra,
  };
  return { opts, retries };
}

describe('streamWithRetry', () => {
  it('passes a successful stream through untouched', async () => {
    const { provider, calls } = fakeProvider([{ events: answer }]);
    const { opts, retries } = options();
    expect(await collect(streamWithRetry(provider, request, opts))).toEqual({
      events: answer,
      error: undefined,
    });
    expect(calls).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('retries a retryable error raised before any event', async () => {
    const first = retryable(429);
    const { provider, calls } = fakeProvider([{ error: first }, { events: answer }]);
    const { opts, retries } = options();
    const outcome = await collect(streamWithRetry(provider, request, opts));
    expect(outcome).toEqual({ events: answer, error: undefined });
    expect(calls).toHaveLength(2);
    expect(retries).toEqual([[first, 1]]);
  });

  it('passes the caller signal to every attempt', async () => {
    const { provider, calls } = fakeProvider([{ error: retryable() }, { events: answer }]);
    const { opts } = options();
    await collect(streamWithRetry(provider, request, opts));
    expect(calls).toEqual([opts.signal, opts.signal]);
  });

  it('never retries once an event was yielded', async () => {
    const error = retryable();
    const { provider, calls } = fakeProvider([
      { events: [{ type: 'text_delta', text: 'Met' }], error },
      { events: answer },
    ]);
    const { opts, retries } = options();
    const outcome = await collect(streamWithRetry(provider, request, opts));
    expect(outcome).toEqual({ events: [{ type: 'text_delta', text: 'Met' }], error });
    expect(calls).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('does not retry a non-retryable ProviderError or any other error', async () => {
    for (const error of [final(), new TypeError('bug'), new DOMException('x', 'AbortError')]) {
      const { provider, calls } = fakeProvider([{ error }, { events: answer }]);
      const outcome = await collect(streamWithRetry(provider, request, options().opts));
      expect(outcome.error).toBe(error);
      expect(calls).toHaveLength(1);
    }
  });

  it('stops after `attempts` attempts and throws the last error', async () => {
    const errors = [retryable(500), retryable(502), retryable(503)];
    const { provider, calls } = fakeProvider(errors.map((error) => ({ error })));
    const { opts, retries } = options({ attempts: 3 });
    const outcome = await collect(streamWithRetry(provider, request, opts));
    expect(outcome.error).toBe(errors[2]);
    expect(calls).toHaveLength(3);
    expect(retries.map(([err, attempt]) => [err.status, attempt])).toEqual([
      [500, 1],
      [502, 2],
    ]);
  });

  it('makes a single attempt when attempts is 1', async () => {
    const { provider, calls } = fakeProvider([{ error: retryable() }, { events: answer }]);
    await collect(streamWithRetry(provider, request, options({ attempts: 1 }).opts));
    expect(calls).toHaveLength(1);
  });

  it('stops waiting as soon as the signal aborts, with its reason', async () => {
    const controller = new AbortController();
    const { provider, calls } = fakeProvider([{ error: retryable() }, { events: answer }]);
    const { opts } = options({ signal: controller.signal, backoffMs: 60_000 });
    const reason = new DOMException('cancelled by the user', 'AbortError');
    setTimeout(() => {
      controller.abort(reason);
    }, 20);
    const started = Date.now();
    const outcome = await collect(streamWithRetry(provider, request, opts));
    expect(outcome.error).toBe(reason);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(calls).toHaveLength(1);
  });

  it('starts nothing when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const { provider, calls } = fakeProvider([{ events: answer }]);
    const outcome = await collect(
      streamWithRetry(provider, request, options({ signal: controller.signal }).opts),
    );
    expect((outcome.error as DOMException).name).toBe('AbortError');
    expect(calls).toHaveLength(0);
  });
});

describe('retryDelay', () => {
  const base = (random: number, extra: Partial<RetryOptions> = {}) =>
    options({ backoffMs: 100, attempts: 10, random: () => random, ...extra }).opts;

  it('doubles per attempt, with half of each wait jittered', () => {
    expect([1, 2, 3, 4].map((n) => retryDelay(retryable(), n, base(0)))).toEqual([
      50, 100, 200, 400,
    ]);
    expect([1, 2, 3, 4].map((n) => retryDelay(retryable(), n, base(0.999)))).toEqual([
      100, 200, 400, 800,
    ]);
  });

  it('is capped by maxDelayMs', () => {
    expect(retryDelay(retryable(), 9, base(0.999, { maxDelayMs: 1000 }))).toBe(1000);
  });

  it('waits at least what the backend asked for, and gives up when that is too long', () => {
    expect(retryDelay(retryable(429, 700), 1, base(0))).toBe(700);
    expect(retryDelay(retryable(429, 5000), 1, base(0, { maxDelayMs: 2000 }))).toBeUndefined();
  });

  it('has no delay for errors that are not retried', () => {
    expect(retryDelay(final(), 1, base(0))).toBeUndefined();
    expect(retryDelay(new Error('x'), 1, base(0))).toBeUndefined();
    expect(retryDelay(retryable(), 10, base(0))).toBeUndefined();
  });
});
