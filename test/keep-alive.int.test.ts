import { request, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { bearer, createUser } from './helpers/factories.js';
import { documentRows, filesDir, filesUnder, multipartBody } from './helpers/knowledge.js';
import { chunk, RawConnection, requestHead, type RawResponse } from './helpers/raw-http.js';

/**
 * Error answers sent while the request body is still arriving (DECISIONS 1 and 6, drain.ts): a
 * small rest is read to its end and the answer goes on a connection that stays usable; a large or
 * slow one is answered at once and the connection closes. Over a real socket: `inject` has none.
 */

const MB = 1024 * 1024;
const UPLOAD = '/api/admin/kb/documents';
const BINARY = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a]); // 6 bytes: neither PDF nor text
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A small upload (by default of the wrong type), split right after the file's bytes. */
function smallUpload(extra: { name: string; value: string }[] = [], file = BINARY) {
  const { payload, contentType } = multipartBody([
    ...extra,
    { name: 'title', value: 'Wrong type' },
    { name: 'category', value: 'tests' },
    { name: 'file', filename: 'scan.pdf', content: file },
  ]);
  const cut = payload.indexOf(BINARY) + BINARY.length;
  return { payload, contentType, head: payload.subarray(0, cut), tail: payload.subarray(cut) };
}

function envelopeCode(res: RawResponse): string {
  const body = JSON.parse(res.body) as { success: boolean; error: { code: string } };
  expect(body.success).toBe(false);
  return body.error.code;
}

/**
 * A chunked upload whose file is binary from its first byte, written as fast as the socket takes
 * it (up to 32 MB) until the answer arrives: what the client read, or how it failed.
 */
function chunkedBinaryUpload(port: number, token: string): Promise<string> {
  const { head, contentType } = smallUpload();
  const piece = Buffer.alloc(64 * 1024, 0x00);
  return new Promise((resolve) => {
    let answered = false;
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: UPLOAD,
      headers: { ...bearer(token), 'content-type': contentType },
      agent: false,
    });
    req.on('response', (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => {
        const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as {
          error: { code: string };
        };
        resolve(`${String(res.statusCode)} ${body.error.code} ${String(res.headers.connection)}`);
      });
      res.on('error', (err) => {
        resolve(`failed reading: ${err.message}`);
      });
    });
    req.on('error', (err) => {
      if (!answered) resolve(`failed: ${err.message}`);
    });
    req.write(head);
    let sent = 0;
    const pump = () => {
      while (!answered && !req.destroyed && sent < 32 * MB) {
        sent += piece.length;
        if (!req.write(piece)) {
          req.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
}

describe('error answers while the request body is still arriving', () => {
  let t: TestApp;
  let port: number;
  let token: string;
  const open: RawConnection[] = [];
  const connect = async () => {
    const conn = await RawConnection.open(port);
    open.push(conn);
    return conn;
  };
  /** The next request on `conn` is answered: the connection stayed usable. */
  const stillUsable = async (conn: RawConnection) => {
    await conn.write(requestHead('GET', '/health'));
    const res = await conn.next();
    expect(res.status, res.body).toBe(200);
    expect(conn.idle).toBe(true);
  };

  beforeAll(async () => {
    t = await createTestApp({ env: { KB_WORKER_ENABLED: 'false' } });
    token = (await createUser(t.app, t.deps, { admin: true })).access;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());
  afterEach(async () => {
    for (const conn of open.splice(0)) conn.close();
    // Whatever was refused left nothing behind.
    expect(await filesUnder(filesDir(t.deps))).toEqual([]);
    expect(await documentRows(t.deps)).toBe(0);
  });

  describe('a small rest is read, and the connection stays usable', () => {
    it('fetch: 20 uploads of a 6-byte binary file all get the 415 envelope on one connection', async () => {
      const sockets = new Set<Socket>();
      let closed = 0;
      const onRequest = (req: IncomingMessage) => {
        if (sockets.has(req.socket)) return;
        sockets.add(req.socket);
        req.socket.once('close', () => closed++);
      };
      t.app.server.on('request', onRequest);
      const outcomes: string[] = [];
      try {
        for (let i = 0; i < 20; i++) {
          const form = new FormData();
          form.set('title', 'Wrong type');
          form.set('category', 'tests');
          form.set('file', new Blob([BINARY]), 'scan.pdf');
          try {
            const res = await fetch(`http://127.0.0.1:${String(port)}${UPLOAD}`, {
              method: 'POST',
              headers: bearer(token),
              body: form,
            });
            const body = (await res.json()) as { error: { code: string } };
            outcomes.push(`${String(res.status)} ${body.error.code}`);
          } catch (err) {
            outcomes.push(`failed: ${String((err as { cause?: unknown }).cause ?? err)}`);
          }
        }
      } finally {
        t.app.server.off('request', onRequest);
      }
      expect(outcomes).toEqual(Array(20).fill('415 UNSUPPORTED_MEDIA_TYPE'));
      expect(closed).toBe(0);
      // Before: one connection per upload. Node's fetch opens a second connection for the second
      // multipart upload whatever the answer (20 accepted uploads do the same), then reuses one.
      expect(sockets.size).toBeLessThanOrEqual(2);
    });

    it('fetch: a body whose end arrives late is read to its end, then answered', async () => {
      const { head, tail, contentType } = smallUpload();
      let tailSentAt = 0;
      const pieces = [head, tail];
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const piece = pieces.shift();
          if (piece === undefined) {
            controller.close();
            return;
          }
          if (piece === tail) {
            await sleep(150);
            tailSentAt = Date.now();
          }
          controller.enqueue(piece);
        },
      });
      const res = await fetch(`http://127.0.0.1:${String(port)}${UPLOAD}`, {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': contentType },
        body,
        duplex: 'half',
      });
      const answeredAt = Date.now();
      expect(res.status).toBe(415);
      expect(res.headers.get('connection')).toBe('keep-alive');
      expect(tailSentAt).toBeGreaterThan(0);
      expect(answeredAt).toBeGreaterThanOrEqual(tailSentAt);
      await res.arrayBuffer();
    });

    it('a small wrong-type file, then another request on the same socket', async () => {
      const conn = await connect();
      const { head, tail, contentType } = smallUpload();
      await conn.write(
        requestHead('POST', UPLOAD, {
          ...bearer(token),
          'content-type': contentType,
          'content-length': head.length + tail.length,
        }),
      );
      await conn.write(head);
      await sleep(100); // the server has seen the file's bytes before the rest arrives
      await conn.write(tail);
      const res = await conn.next();
      expect(res.status, res.body).toBe(415);
      expect(envelopeCode(res)).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(res.headers.connection).toBe('keep-alive');
      await stillUsable(conn);
    });

    it('a 422 for a field found mid-stream, then another request', async () => {
      const conn = await connect();
      // A text file after the field, larger than what the multipart parser buffers unread.
      const text = Buffer.alloc(MB, 'a');
      const { payload, contentType } = smallUpload([{ name: 'author', value: 'me' }], text);
      const cut = payload.indexOf('me\r\n') + 4; // the rest, file included, comes later
      await conn.write(
        requestHead('POST', UPLOAD, {
          ...bearer(token),
          'content-type': contentType,
          'content-length': payload.length,
        }),
      );
      await conn.write(payload.subarray(0, cut));
      await sleep(100);
      await conn.write(payload.subarray(cut));
      const res = await conn.next();
      expect(res.status, res.body).toBe(422);
      expect(res.body).toContain('body.author');
      await stillUsable(conn);
    });

    it('a 401 on the upload route with a small body, then another request', async () => {
      const conn = await connect();
      const { payload, contentType } = smallUpload();
      await conn.write(
        requestHead('POST', UPLOAD, {
          'content-type': contentType,
          'content-length': payload.length,
        }),
      );
      await conn.write(payload);
      const res = await conn.next();
      expect(res.status, res.body).toBe(401);
      expect(envelopeCode(res)).toBe('UNAUTHORIZED');
      await stillUsable(conn);
    });

    const bigJson = () =>
      Buffer.from(JSON.stringify({ email: 'a@b.test', password: 'x'.repeat(1.5 * MB) }));

    it('JSON over the 1 MiB limit with Content-Length: 413, then another request', async () => {
      const conn = await connect();
      const json = bigJson();
      const head = { 'content-type': 'application/json', 'content-length': json.length };
      await conn.write(requestHead('POST', '/api/auth/login', head));
      await conn.write(json);
      const res = await conn.next();
      expect(res.status, res.body).toBe(413);
      expect(envelopeCode(res)).toBe('PAYLOAD_TOO_LARGE');
      expect(res.headers.connection).not.toBe('close');
      await stillUsable(conn);
    });

    it('chunked JSON over the 1 MiB limit: 413, then another request', async () => {
      const conn = await connect();
      const json = bigJson();
      const head = { 'content-type': 'application/json', 'transfer-encoding': 'chunked' };
      await conn.write(requestHead('POST', '/api/auth/login', head));
      for (let at = 0; at < json.length; at += 64 * 1024) {
        await conn.write(chunk(json.subarray(at, at + 64 * 1024)));
      }
      await conn.write(chunk(''));
      const res = await conn.next();
      expect(res.status, res.body).toBe(413);
      expect(envelopeCode(res)).toBe('PAYLOAD_TOO_LARGE');
      expect(res.headers.connection).not.toBe('close');
      await stillUsable(conn);
    });
  });

  describe('a large or slow rest is not read: the answer comes at once and the connection closes', () => {
    it('an upload declaring 10 MB whose first bytes are binary: 415 before the rest is sent', async () => {
      const conn = await connect();
      const { head, contentType } = smallUpload();
      await conn.write(
        requestHead('POST', UPLOAD, {
          ...bearer(token),
          'content-type': contentType,
          'content-length': 10 * MB,
        }),
      );
      await conn.write(head);
      const res = await conn.next();
      expect(res.status, res.body).toBe(415);
      expect(res.headers.connection).toBe('close');
      await conn.closed;
    });

    it('a client still writing when the connection closes reads its answer: 20 chunked binary uploads', async () => {
      // Closing a socket with unread bytes resets it, and the reset can overtake the answer: the
      // client then sees only EPIPE. The server half-closes and discards the rest for a while.
      const outcomes: string[] = [];
      for (let i = 0; i < 20; i++) outcomes.push(await chunkedBinaryUpload(port, token));
      expect(outcomes).toEqual(Array(20).fill('415 UNSUPPORTED_MEDIA_TYPE close'));
    });

    it('chunked JSON that keeps coming: 413 once the drain bound is passed', async () => {
      const conn = await connect();
      const head = { 'content-type': 'application/json', 'transfer-encoding': 'chunked' };
      await conn.write(requestHead('POST', '/api/auth/login', head));
      const piece = chunk(Buffer.alloc(64 * 1024, 0x20));
      // Writes until an answer arrives (or the server stops taking bytes).
      while (conn.idle && conn.sent < 20 * MB && (await conn.write(piece))) await sleep(1);
      const res = await conn.next();
      expect(res.status, res.body).toBe(413);
      expect(res.headers.connection).toBe('close');
      // The 1 MiB limit, the 2 MiB drained after it, and what socket buffers hold.
      expect(conn.sent).toBeLessThan(8 * MB);
      await conn.closed;
    });

    it('a small body that stops arriving: the answer after about two seconds, then close', async () => {
      const conn = await connect();
      const { payload, contentType } = smallUpload();
      const started = Date.now();
      await conn.write(
        requestHead('POST', UPLOAD, {
          'content-type': contentType,
          'content-length': payload.length,
        }),
      );
      await conn.write(payload.subarray(0, 40));
      const res = await conn.next(6000);
      const waited = Date.now() - started;
      expect(res.status, res.body).toBe(401);
      expect(res.headers.connection).toBe('close');
      expect(waited).toBeGreaterThanOrEqual(1900);
      expect(waited).toBeLessThan(4000);
      await conn.closed;
    });
  });
});
