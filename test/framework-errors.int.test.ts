import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser, type TestUser } from './helpers/factories.js';

/**
 * Errors raised below the routes (the router's URL decoding and parameter handling, Node's HTTP
 * parser) are the envelope with X-Request-ID like any other (DECISIONS 1), over a real socket.
 */

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection after answering. */
  closed: boolean;
}

/** Writes raw bytes on a fresh connection and reads the one answer (Content-Length framed). */
function exchange(port: number, request: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let data = Buffer.alloc(0);
    let closed = false;
    const finish = () => {
      const text = data.toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [
          l.slice(0, l.indexOf(':')).toLowerCase(),
          l.slice(l.indexOf(':') + 1).trim(),
        ]),
      );
      const body = rest.join('\r\n\r\n').slice(0, Number(headers['content-length'] ?? 0));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, closed });
      socket.destroy();
    };
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const text = data.toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text)?.[1];
      if (end >= 0 && length !== undefined && data.length >= end + 4 + Number(length)) {
        setTimeout(finish, 50); // long enough to see a close that follows the answer
      }
    });
    socket.on('end', () => (closed = true));
    socket.on('close', () => (closed = true));
    socket.on('error', reject);
    socket.write(request);
  });
}

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`;

function envelopeOf(answer: Answer) {
  const body = JSON.parse(answer.body) as {
    success: boolean;
    data: unknown;
    error: { code: string; message: string; details: unknown };
    meta: { request_id: string };
  };
  expect(body.success).toBe(false);
  expect(body.data).toBeNull();
  expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  expect(body.meta.request_id).toBe(answer.headers['x-request-id']);
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
  return body.error;
}

describe('errors below the routes', () => {
  let t: TestApp;
  let port: number;
  let user: TestUser;
  beforeAll(async () => {
    t = await createTestApp({ backend: 'pglite' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    port = address.port;
    user = await createUser(t.app, t.deps);
  });
  afterAll(() => t.close());

  const auth = () => `Authorization: ${bearer(user.access).authorization}\r\n`;

  it('answers a bad percent-encoding in the path with a 422 envelope, not Fastify’s raw 400', async () => {
    const answer = await exchange(port, get('/conversations/%E0%A4%A', auth()));
    expect(answer.status).toBe(422);
    expect(envelopeOf(answer)).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'Request validation failed',
      details: [{ field: 'path', message: 'is not valid percent-encoded UTF-8' }],
    });
    expect(answer.closed).toBe(false);
  });

  it.each([100, 1000, 10_000])(
    'judges a path parameter of %i characters by its schema: a 422 naming it, nothing echoed',
    async (length) => {
      const long = 'a'.repeat(length);
      const answer = await exchange(port, get(`/conversations/${long}`, auth()));
      expect(answer.status).toBe(422);
      expect(envelopeOf(answer).details).toEqual([
        { field: 'params.conversation_id', message: 'must match format "uuid"' },
      ]);
      expect(answer.body).not.toContain(long);
    },
  );

  it('still asks for a token first on a protected route with a long parameter', async () => {
    const answer = await exchange(port, get(`/conversations/${'a'.repeat(5000)}`));
    expect(answer.status).toBe(401);
    expect(envelopeOf(answer).code).toBe('UNAUTHORIZED');
  });

  it('echoes at most 100 characters of an unknown path', async () => {
    const answer = await exchange(port, get(`/api/${'x'.repeat(5000)}`));
    expect(answer.status).toBe(404);
    const error = envelopeOf(answer);
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message.length).toBeLessThan(130);
  });

  it('answers a request head over 16 KiB with a 431 envelope and closes', async () => {
    const answer = await exchange(port, get(`/conversations/${'a'.repeat(20_000)}`));
    expect(answer.status).toBe(431);
    expect(envelopeOf(answer)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(answer.closed).toBe(true);
  });

  it('answers what is not HTTP with a 400 envelope and closes', async () => {
    const answer = await exchange(port, 'HELLO THERE\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(envelopeOf(answer)).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'Malformed HTTP request',
      details: null,
    });
    expect(answer.closed).toBe(true);
  });

  it('answers a header the parser refuses with a 400 envelope', async () => {
    const answer = await exchange(port, get('/health', 'Bad Header: x\r\n'));
    expect(answer.status).toBe(400);
    expect(envelopeOf(answer).code).toBe('VALIDATION_ERROR');
  });
});
