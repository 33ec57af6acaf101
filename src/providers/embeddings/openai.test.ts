import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddingsProviderError } from './errors.js';
import { decodeEmbedding, OpenAiEmbeddings } from './openai.js';

/**
 * Contract test against a local server speaking the OpenAI embeddings API:
 * POST /v1/embeddings { model, input: string[], encoding_format?, dimensions? } answered with
 * { object: 'list', data: [{ object: 'embedding', index, embedding }], model, usage }.
 */

const KEY = 'sk-test-0123456789abcdef';
const DIMS = 4;

interface Recorded {
  path: string | undefined;
  authorization: string | undefined;
  body: { model: string; input: string[]; encoding_format?: string; dimensions?: number };
}

type Handler = (req: Recorded, res: ServerResponse) => void;

let server: Server;
let baseUrl: string;
let requests: Recorded[] = [];
let handler: Handler;

/** A deterministic, deliberately unnormalised vector per input: [len, 1, 0, 2]. */
function rawVector(text: string): number[] {
  return [text.length, 1, 0, 2];
}

function base64(vector: number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

/** Answers like OpenAI, in reverse order so the client must sort by `index`. */
const answer: Handler = (req, res) => {
  const asBase64 = req.body.encoding_format === 'base64';
  const data = req.body.input.map((text, index) => ({
    object: 'embedding',
    index,
    embedding: asBase64 ? base64(rawVector(text)) : rawVector(text),
  }));
  res.setHeader('content-type', 'application/json');
  res.end(
    JSON.stringify({
      object: 'list',
      data: data.reverse(),
      model: req.body.model,
      usage: { prompt_tokens: 5, total_tokens: 5 },
    }),
  );
};

function fail(status: number, message: string, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ error: { message, type: 'error', param: null, code: null } }));
  };
}

async function record(req: IncomingMessage): Promise<Recorded> {
  let raw = '';
  for await (const chunk of req) raw += String(chunk);
  return {
    path: req.url,
    authorization: req.headers.authorization,
    body: JSON.parse(raw) as Recorded['body'],
  };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void record(req).then((recorded) => {
      requests.push(recorded);
      handler(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests = [];
  handler = answer;
});

const client = (extra: { batchSize?: number; dimensions?: number } = {}) =>
  new OpenAiEmbeddings({ baseUrl, apiKey: KEY, model: 'test-embed', dimensions: DIMS, ...extra });

async function failure(promise: Promise<unknown>): Promise<EmbeddingsProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EmbeddingsProviderError);
  return error as EmbeddingsProviderError;
}

describe('OpenAiEmbeddings', () => {
  it('posts the model, the inputs and the encoding with the bearer key', async () => {
    await client().embed(['alpha', 'be']);
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request!.path).toBe('/v1/embeddings');
    expect(request!.authorization).toBe(`Bearer ${KEY}`);
    expect(request!.body).toEqual({
      model: 'test-embed',
      input: ['alpha', 'be'],
      encoding_format: 'base64',
      dimensions: DIMS,
    });
  });

  it('names the model with its size and omits `dimensions` for known models', () => {
    const known = new OpenAiEmbeddings({ baseUrl, apiKey: KEY, model: 'text-embedding-3-small' });
    expect(known.model).toBe('text-embedding-3-small@1536');
    expect(known.dimensions).toBe(1536);
    expect(() => new OpenAiEmbeddings({ baseUrl, apiKey: KEY, model: 'mystery' })).toThrow(
      /dimensions/,
    );
  });

  it('orders vectors by index and L2-normalises them', async () => {
    const [a, b] = await client().embed(['alpha', 'be']);
    const expected = (n: number) => rawVector('x'.repeat(n)).map((v) => v / Math.hypot(n, 1, 0, 2));
    expect(Array.from(a!)).toEqual(expected(5).map(Math.fround));
    expect(Array.from(b!)).toEqual(expected(2).map(Math.fround));
  });

  it('accepts number arrays from servers that ignore encoding_format', async () => {
    handler = (req, res) => {
      answer({ ...req, body: { ...req.body, encoding_format: 'float' } }, res);
    };
    const [a] = await client().embed(['alpha']);
    expect(a![0]).toBeCloseTo(5 / Math.hypot(5, 1, 0, 2), 6);
  });

  it('batches inputs and keeps the overall order', async () => {
    const texts = Array.from({ length: 7 }, (_, i) => 'y'.repeat(i + 1));
    const vectors = await client({ batchSize: 3 }).embed(texts);
    expect(requests.map((r) => r.body.input.length)).toEqual([3, 3, 1]);
    expect(vectors.map((v) => Math.round((v[0]! / v[1]!) * 100) / 100)).toEqual([
      1, 2, 3, 4, 5, 6, 7,
    ]);
  });

  it('refuses empty inputs without a request', async () => {
    const error = await failure(client().embed(['ok', '  ']));
    expect(error.retryable).toBe(false);
    expect(requests).toHaveLength(0);
    expect(await client().embed([])).toEqual([]);
  });

  it('classifies 429 as retryable and reads Retry-After', async () => {
    handler = fail(429, 'Rate limit reached', { 'retry-after': '2' });
    const error = await failure(client().embed(['a']));
    expect(error).toMatchObject({ provider: 'openai', status: 429, retryable: true });
    expect(error.retryAfterMs).toBe(2000);
    expect(requests).toHaveLength(1);
  });

  it('classifies 5xx as retryable and 400 as not', async () => {
    handler = fail(503, 'overloaded');
    expect((await failure(client().embed(['a']))).retryable).toBe(true);
    handler = fail(400, 'input too long');
    const bad = await failure(client().embed(['a']));
    expect(bad).toMatchObject({ status: 400, retryable: false });
    expect(bad.message).toContain('input too long');
  });

  it('reports a rejected key without repeating it', async () => {
    handler = fail(401, `Incorrect API key provided: ${KEY}. You can find your key at ...`);
    const error = await failure(client().embed(['a']));
    expect(error).toMatchObject({ status: 401, retryable: false });
    expect(error.message).toMatch(/authentication rejected/);
    expect(`${error.message} ${String(error.stack)}`).not.toContain('sk-test');
  });

  it('classifies an unreachable backend as retryable', async () => {
    const offline = new OpenAiEmbeddings({
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: KEY,
      model: 'test-embed',
      dimensions: DIMS,
    });
    expect((await failure(offline.embed(['a']))).retryable).toBe(true);
  });

  it('rejects vectors of the wrong size or a missing index', async () => {
    const error = await failure(client({ dimensions: 8 }).embed(['a']));
    expect(error.message).toMatch(/4 dimensions, expected 8/);
    handler = (req, res) => {
      answer({ ...req, body: { ...req.body, input: ['z', 'z'] } }, res);
    };
    expect((await failure(client().embed(['a']))).message).toMatch(/expected 1 embeddings/);
  });

  it('stops when the signal aborts, with the caller’s reason', async () => {
    handler = () => undefined; // never answers
    const controller = new AbortController();
    const pending = client().embed(['a'], { signal: controller.signal });
    setTimeout(() => {
      controller.abort(new Error('turn cancelled'));
    }, 20);
    await expect(pending).rejects.toThrow('turn cancelled');
  });
});

describe('decodeEmbedding', () => {
  it('decodes little-endian float32 base64 and number arrays alike', () => {
    expect(Array.from(decodeEmbedding(base64([0.5, -2])))).toEqual([0.5, -2]);
    expect(Array.from(decodeEmbedding([0.5, -2]))).toEqual([0.5, -2]);
    expect(() => decodeEmbedding({})).toThrow(EmbeddingsProviderError);
    expect(() => decodeEmbedding('AAA=')).toThrow(EmbeddingsProviderError);
  });
});
