import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LlmHealthProbe, type LlmHealthOptions } from '../src/modules/ops/llm-health.js';
import { buildOpsApp } from '../src/modules/ops/app.js';
import { Chaos } from '../src/platform/chaos.js';
import type { App } from '../src/platform/http/types.js';
import { chaosLlm } from '../src/providers/chaos.js';
import { ExtractiveProvider } from '../src/providers/llm/extractive.js';
import { OpenAiLlmProvider } from '../src/providers/llm/openai.js';
import type { LlmProvider } from '../src/providers/llm/types.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, dataOf, type TestUser } from './helpers/factories.js';
import { OpenAiChatServer, type Reply } from './helpers/openai-chat-server.js';

/**
 * The language model's health, measured (issue 22 item 7): the `openai` provider lists the models
 * of a local server replaying recorded OpenAI answers (slowly, wrongly, or not at all), the probe
 * judges it and reuses the result for 30 s, and the operator port's provider status reports it.
 */

const KEY = 'sk-test-4f9a2c7e1b3d5f8a0c6e';
const MODEL = 'gpt-4o-mini';
const MODELS: Reply = { kind: 'json', fixture: 'models.json' };

/** A port nothing listens on: taken from the system, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

describe('the language model probe against an OpenAI-compatible endpoint', () => {
  const server = new OpenAiChatServer();
  let clock = 0;
  const llm = (model = MODEL, baseUrl = server.baseUrl) =>
    new OpenAiLlmProvider({ baseUrl, apiKey: KEY, model, timeoutMs: 10_000 });
  const probe = (options: Partial<LlmHealthOptions> = {}, provider: LlmProvider = llm()) =>
    // Generous bounds unless a test is about them: a loaded machine is not a slow endpoint.
    new LlmHealthProbe(provider, { timeoutMs: 10_000, slowMs: 5000, now: () => clock, ...options });

  beforeAll(() => server.start());
  afterAll(() => server.stop());
  beforeEach(() => {
    clock = Date.parse('2026-11-27T10:00:00.000Z');
  });

  it('an endpoint that lists its models at once is ok', async () => {
    server.script(MODELS);
    const health = await probe().check();
    expect(health).toMatchObject({
      status: 'ok',
      kind: 'remote',
      probe: 'GET /models',
      detail: undefined,
      modelListed: true,
      lastError: null,
      lastErrorAt: null,
    });
    expect(health.latencyMs).toBeGreaterThanOrEqual(0);
    expect(health.checkedAt.toISOString()).toBe('2026-11-27T10:00:00.000Z');
    expect(server.requests.map((r) => [r.method, r.path, r.authorization])).toEqual([
      ['GET', '/v1/models', `Bearer ${KEY}`],
    ]);
  });

  it('says so when the endpoint does not list the configured model', async () => {
    server.script(MODELS);
    const health = await probe({}, llm('llama3.1:8b')).check();
    expect(health).toMatchObject({
      status: 'ok',
      modelListed: false,
      detail: 'the endpoint does not list the model llama3.1:8b',
    });
  });

  it('a slow answer is degraded, with its latency', async () => {
    server.script({ ...MODELS, delayMs: 400 });
    const health = await probe({ slowMs: 150 }).check();
    expect(health.status).toBe('degraded');
    expect(health.latencyMs).toBeGreaterThanOrEqual(400);
    expect(health.detail).toBe(`answered in ${String(health.latencyMs)} ms, slower than 150 ms`);
    expect(health.lastError).toBe(health.detail);
  });

  it.each([
    ['a 500', 'server-error.json', 'unavailable', /^model listing request failed with HTTP 500/],
    ['a 401', 'unauthorized.json', 'unavailable', /HTTP 401.*check OPENAI_API_KEY$/],
    ['a 429', 'rate-limited.json', 'degraded', /HTTP 429 \(rate_limit_exceeded, tokens\)/],
    ['a 404', 'not-found.json', 'degraded', /HTTP 404/],
  ])('%s is %s, with the error', async (_case, fixture, status, message) => {
    server.script({ kind: 'error', fixture });
    const health = await probe().check();
    expect(health.status).toBe(status);
    expect(health.detail).toMatch(message);
    expect(health.lastError).toBe(health.detail);
    expect(health.lastErrorAt?.toISOString()).toBe('2026-11-27T10:00:00.000Z');
    expect(health.latencyMs).toEqual(expect.any(Number));
    expect(health.lastError).not.toContain(KEY);
    expect(health.lastError).not.toContain('sk-test-');
  });

  it('a 2xx that is not a model list is degraded (a base URL that is some web page)', async () => {
    server.script({ kind: 'json', fixture: 'not-a-list.json' });
    const health = await probe().check();
    expect(health).toMatchObject({
      status: 'degraded',
      detail: 'GET /models answered, but not with a list of models',
      modelListed: null,
    });
  });

  it('no answer within the timeout is down', async () => {
    server.script({ kind: 'silent' });
    const started = performance.now();
    const health = await probe({ timeoutMs: 300, slowMs: 100 }).check();
    expect(performance.now() - started).toBeLessThan(2000);
    expect(health).toMatchObject({
      status: 'unavailable',
      detail: 'no answer within 300 ms',
      latencyMs: null,
      kind: null,
      modelListed: null,
      lastError: 'no answer within 300 ms',
    });
  });

  it('a connection reset is down', async () => {
    server.script({ kind: 'reset' });
    const health = await probe().check();
    expect(health.status).toBe('unavailable');
    expect(health.detail).toMatch(/^model listing unreachable/);
  });

  it('a refused connection is down, saying so, without the URL or its credentials', async () => {
    const port = await closedPort();
    const provider = llm(MODEL, `http://127.0.0.1:${String(port)}/v1`);
    const health = await probe({}, provider).check();
    expect(health).toMatchObject({
      status: 'unavailable',
      detail: 'model listing unreachable (ECONNREFUSED)',
      latencyMs: null,
    });
    const withCredentials = llm(MODEL, `http://probe:hunter2@127.0.0.1:${String(port)}/v1`);
    const refused = await probe({}, withCredentials).check();
    expect(refused.status).toBe('unavailable');
    expect(JSON.stringify(refused)).not.toMatch(/hunter2|probe:|127\.0\.0\.1/);
  });

  it('keeps the last error after the endpoint recovers', async () => {
    const health = probe();
    server.script({ kind: 'error', fixture: 'server-error.json' });
    const down = await health.check();
    expect(down.status).toBe('unavailable');
    clock += 30_000;
    server.script(MODELS);
    const up = await health.check();
    expect(up).toMatchObject({ status: 'ok', lastError: down.detail });
    expect(up.lastErrorAt?.toISOString()).toBe('2026-11-27T10:00:00.000Z');
    expect(up.checkedAt.toISOString()).toBe('2026-11-27T10:00:30.000Z');
  });

  it('reuses a result for 30 s, then probes again', async () => {
    const health = probe();
    server.script(MODELS, { kind: 'error', fixture: 'server-error.json' });
    const first = await health.check();
    clock += 29_999;
    expect(await health.check()).toBe(first);
    expect(server.requests).toHaveLength(1);
    clock += 1;
    const second = await health.check();
    expect(server.requests).toHaveLength(2);
    expect(second.status).toBe('unavailable');
  });

  it('many asking at once make one probe', async () => {
    const health = probe();
    server.script({ ...MODELS, delayMs: 200 }, MODELS);
    const all = await Promise.all(Array.from({ length: 20 }, () => health.check()));
    expect(server.requests).toHaveLength(1);
    expect(new Set(all).size).toBe(1);
    expect(all[0]?.status).toBe('ok');
  });

  it('a probe still running when its result would be stale is not doubled', async () => {
    const health = probe();
    server.script({ ...MODELS, delayMs: 300 }, MODELS);
    const first = health.check();
    clock += 45_000;
    expect(health.check()).toBe(first);
    await first;
    expect(server.requests).toHaveLength(1);
  });

  it('sees the faults chaos injects into the model', async () => {
    const chaos = new Chaos({ enabled: true });
    chaos.set('llm', { latency_ms: 0, error_rate: 1 });
    server.script(MODELS);
    const health = await probe({}, chaosLlm(llm(), chaos)).check();
    expect(health).toMatchObject({
      status: 'unavailable',
      detail: 'language model unavailable: HTTP 503 (chaos)',
    });
    expect(server.requests).toHaveLength(0);
  });
});

describe('the language model probe of the offline model', () => {
  const options = { timeoutMs: 10_000, slowMs: 5000 };

  it('answers a fixed question in-process: ok, in_process', async () => {
    const health = await new LlmHealthProbe(new ExtractiveProvider(), options).check();
    expect(health).toMatchObject({
      status: 'ok',
      kind: 'in_process',
      probe: 'a fixed question answered from a fixed passage',
      modelListed: null,
      lastError: null,
    });
    expect(health.latencyMs).toEqual(expect.any(Number));
  });

  it('a model that cannot answer it is down', async () => {
    // Tuned to refuse everything: the probe's question gets no answer.
    const refusing = new ExtractiveProvider({ tuning: { threshold: 1e9 } });
    const health = await new LlmHealthProbe(refusing, options).check();
    expect(health).toMatchObject({
      status: 'unavailable',
      detail: 'the in-process model did not answer its fixed question',
    });
  });

  it('a probe that ignores its signal is still down at the timeout', async () => {
    const deaf: LlmProvider = {
      name: 'deaf',
      model: 'deaf-1',
      stream: () => ({
        [Symbol.asyncIterator]: () => ({
          next: () => Promise.resolve({ done: true as const, value: undefined }),
        }),
      }),
      probe: () => new Promise(() => undefined),
    };
    const health = await new LlmHealthProbe(deaf, { timeoutMs: 200, slowMs: 100 }).check();
    expect(health).toMatchObject({ status: 'unavailable', detail: 'no answer within 200 ms' });
  });

  it('a provider without a probe is unknown, never a constant ok', async () => {
    const bare: LlmProvider = {
      name: 'bare',
      model: 'bare-1',
      stream: () => ({
        [Symbol.asyncIterator]: () => ({
          next: () => Promise.resolve({ done: true, value: undefined }),
        }),
      }),
    };
    const health = await new LlmHealthProbe(bare, options).check();
    expect(health).toMatchObject({
      status: 'unknown',
      detail: 'this provider has no health probe',
    });
  });
});

describe('GET /api/admin/provider-status reports the probe (operator port)', () => {
  const server = new OpenAiChatServer();
  let t: TestApp;
  let ops: App;
  let admin: TestUser;
  const status = async () => {
    const res = await ops.inject({
      method: 'GET',
      url: '/api/admin/provider-status',
      headers: bearer(admin.access),
    });
    expect(res.statusCode, res.body).toBe(200);
    return dataOf<{ providers: { llm: Record<string, unknown> } }>(res).providers.llm;
  };

  beforeAll(async () => {
    await server.start();
    t = await createTestApp({
      backend: 'pglite',
      env: { LLM_HEALTH_TIMEOUT_MS: '10000', LLM_HEALTH_SLOW_MS: '5000' },
      llm: new OpenAiLlmProvider({
        baseUrl: server.baseUrl,
        apiKey: KEY,
        model: MODEL,
        timeoutMs: 10_000,
      }),
    });
    admin = await createUser(t.app, t.deps, { admin: true });
    ({ app: ops } = await buildOpsApp(t.deps));
    await ops.ready();
  });
  afterAll(async () => {
    await ops.close();
    await t.close();
    await server.stop();
  });

  it('probes once for many requests, and reports status, latency and when', async () => {
    server.script({ ...MODELS, delayMs: 100 });
    const answers = await Promise.all(Array.from({ length: 5 }, () => status()));
    expect(server.requests.map((r) => r.path)).toEqual(['/v1/models']);
    for (const llm of answers) expect(llm).toEqual(answers[0]);
    const llm = answers[0] ?? {};
    expect(llm).toMatchObject({
      provider: 'openai',
      model: MODEL,
      status: 'ok',
      fallback_active: false,
      kind: 'remote',
      probe: 'GET /models',
      model_listed: true,
      last_error: null,
      last_error_at: null,
    });
    expect(llm.latency_ms).toBeGreaterThanOrEqual(100);
    expect(Date.parse(String(llm.checked_at))).toBeGreaterThan(Date.now() - 10_000);
    // Within 30 s the same result is reported without asking the endpoint again.
    expect(await status()).toEqual(llm);
    expect(server.requests).toHaveLength(1);
  });
});
