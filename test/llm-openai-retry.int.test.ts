import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamWithRetry } from '../src/providers/llm/retry.js';
import type { ProviderError } from '../src/providers/llm/types.js';
import { collect, makeProvider, providerError, request, text } from './helpers/llm-contract.js';
import { OpenAiChatServer } from './helpers/openai-chat-server.js';

/** streamWithRetry over the OpenAI-compatible provider, against recorded traffic. */

const server = new OpenAiChatServer();

beforeAll(() => server.start());
afterAll(() => server.stop());

const provider = () => makeProvider(server.baseUrl);

describe('streamWithRetry against the provider', () => {
  const options = (attempts = 3) => ({
    signal: new AbortController().signal,
    attempts,
    backoffMs: 10,
    onRetry: (err: ProviderError, attempt: number) => retries.push([err.status, attempt]),
  });
  let retries: [number | undefined, number][] = [];

  it('retries a 429 once, after its retry-after, and streams the full answer', async () => {
    retries = [];
    server.script(
      { kind: 'error', fixture: 'rate-limited.json' },
      { kind: 'sse', fixture: 'text-with-usage.sse' },
    );
    const started = Date.now();
    const { events, error } = await collect(streamWithRetry(provider(), request, options()));
    expect(error).toBeUndefined();
    expect(retries).toEqual([[429, 1]]);
    expect(server.requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(text(events)).toMatch(/^For adults .* m² \[2\]\.$/);
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
  });

  it('retries a reset before any answer', async () => {
    retries = [];
    server.script({ kind: 'reset' }, { kind: 'sse', fixture: 'text-no-usage.sse' });
    const { error } = await collect(streamWithRetry(provider(), request, options()));
    expect(error).toBeUndefined();
    expect(retries).toEqual([[undefined, 1]]);
  });

  it('does not retry a failure after the first text chunk', async () => {
    retries = [];
    server.script(
      { kind: 'sse', fixture: 'text-with-usage.sse', events: 2, then: 'reset' },
      { kind: 'sse', fixture: 'text-with-usage.sse' },
    );
    const outcome = await collect(streamWithRetry(provider(), request, options()));
    expect(outcome.events).toEqual([
      { type: 'text_delta', text: 'For adults with type 2 diabetes' },
    ]);
    expect(providerError(outcome).retryable).toBe(true);
    expect(retries).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('gives up after the configured attempts', async () => {
    retries = [];
    server.script(
      { kind: 'error', fixture: 'server-error.json' },
      { kind: 'error', fixture: 'server-error.json' },
      { kind: 'sse', fixture: 'text-no-usage.sse' },
    );
    const outcome = await collect(streamWithRetry(provider(), request, options(2)));
    expect(providerError(outcome).status).toBe(500);
    expect(retries).toEqual([[500, 1]]);
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry a final error', async () => {
    retries = [];
    server.script({ kind: 'error', fixture: 'unauthorized.json' });
    const outcome = await collect(streamWithRetry(provider(), request, options()));
    expect(providerError(outcome).status).toBe(401);
    expect(server.requests).toHaveLength(1);
  });
});
