import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bearer, errorOf } from './helpers/factories.js';
import {
  createKbApp,
  documentRows,
  filesDir,
  filesUnder,
  upload,
  uploadParts,
  type KbApp,
} from './helpers/knowledge.js';
import { pdfFromPages } from './helpers/pdf.js';

const MB = 1024 * 1024;
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  randomBytes(2048),
]);

interface Streamed {
  status: number;
  headers: Record<string, unknown>;
  body: string;
  total: number;
  /** Bytes the client had handed to the socket when the response arrived. */
  sentAtResponse: number;
  /** Resolves when the connection is closed. */
  closed: Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Streams a multipart upload whose file part is `fileSize` bytes of `fill` over a real socket,
 * with backpressure, and stops writing as soon as the response arrives. After `slowAfter` bytes
 * of file it writes one chunk per `slowMs`: a server that answers once the limit is crossed does
 * so long before the client could finish.
 */
function streamUpload(
  port: number,
  token: string,
  options: {
    fileSize: number;
    fill: number;
    slowAfter: number;
    slowMs: number;
    /** Send no Content-Length (chunked transfer encoding). */
    chunked?: boolean;
    /** Never send the closing boundary. */
    unterminated?: boolean;
    /** A Content-Length to announce instead of the real one. */
    declared?: number;
  },
): Promise<Streamed> {
  const boundary = `----mas-big-${randomBytes(8).toString('hex')}`;
  const field = (name: string, value: string) =>
    `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const head = Buffer.from(
    field('title', 'Big') +
      field('category', 'big') +
      `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\n` +
      'content-type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const total = head.length + options.fileSize + tail.length;
  const chunk = Buffer.alloc(64 * 1024, options.fill);
  return new Promise((resolve, reject) => {
    let sent = 0;
    // Set from event handlers while the writer loop runs.
    const state = { answered: false, closed: false };
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/admin/kb/documents',
      headers: {
        ...bearer(token),
        'content-type': `multipart/form-data; boundary=${boundary}`,
        ...(options.chunked === true
          ? {}
          : { 'content-length': String(options.declared ?? total) }),
      },
    });
    const closed = new Promise<void>((done) => {
      req.on('socket', (socket) => {
        socket.on('close', () => {
          state.closed = true;
          done();
        });
      });
    });
    req.on('response', (res) => {
      state.answered = true;
      const sentAtResponse = sent;
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => {
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(parts).toString('utf8'),
          total,
          sentAtResponse,
          closed,
        });
      });
      res.on('error', reject);
    });
    req.on('error', (err) => {
      // The server closing the connection under a client still writing is the expected ending.
      if (!state.answered) reject(err);
    });
    const write = async (bytes: Buffer) => {
      sent += bytes.length;
      if (!req.write(bytes)) {
        await new Promise<void>((drained) => {
          const done = () => {
            req.off('drain', done);
            drained();
          };
          req.on('drain', done);
          void closed.then(done);
        });
      }
    };
    void (async () => {
      await write(head);
      let file = 0;
      while (file < options.fileSize && !state.answered && !state.closed) {
        const n = Math.min(chunk.length, options.fileSize - file);
        await write(chunk.subarray(0, n));
        file += n;
        if (file > options.slowAfter) await sleep(options.slowMs);
      }
      if (!state.answered && !state.closed) req.end(options.unterminated === true ? '' : tail);
    })().catch(reject);
  });
}

describe.each(['postgres', 'pglite'] as const)('knowledge upload rejections (%s)', (backend) => {
  let kb: KbApp;
  let token: string;

  beforeAll(async () => {
    kb = await createKbApp({ backend, env: { KB_WORKER_ENABLED: 'false' } });
    token = kb.admin.access;
  });
  afterAll(async () => {
    await kb.close();
  });
  afterEach(async () => {
    // Whatever was rejected left nothing behind: no stored file, no document row.
    expect(await filesUnder(filesDir(kb.deps))).toEqual([]);
    expect(await documentRows(kb.deps)).toBe(0);
  });

  it('a PNG named .pdf is 415', async () => {
    const res = await upload(kb.app, token, { file: PNG, filename: 'scan.pdf' });
    expect(errorOf(res, 415).code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('Latin-1 text (invalid UTF-8) is 415', async () => {
    const latin1 = Buffer.from('Caf\xe9 au lait: pr\xe9paration, dos\xe9e \xe0 50 mg.\n', 'latin1');
    const res = await upload(kb.app, token, { file: latin1, filename: 'notes.txt' });
    expect(errorOf(res, 415).code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('text containing a NUL byte is 415', async () => {
    const res = await upload(kb.app, token, { file: 'valid text\0more text\n' });
    expect(errorOf(res, 415).code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('a large binary is refused from its first bytes', async () => {
    const res = await upload(kb.app, token, { file: randomBytes(3 * MB), filename: 'x.pdf' });
    expect(errorOf(res, 415).code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('an empty file is 422 naming body.file', async () => {
    const error = errorOf(await upload(kb.app, token, { file: Buffer.alloc(0) }), 422);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details).toEqual([expect.objectContaining({ field: 'body.file' })]);
  });

  it('missing title, category and file are 422 naming each field', async () => {
    const noFile = await uploadParts(kb.app, token, [{ name: 'title', value: 'T' }]);
    const error = errorOf(noFile, 422);
    const fields = (error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(['body.category', 'body.file']);

    const onlyFile = await uploadParts(kb.app, token, [
      { name: 'file', filename: 'a.txt', content: 'Some text.\n' },
    ]);
    const missing = errorOf(onlyFile, 422).details as { field: string }[];
    expect(missing.map((d) => d.field).sort()).toEqual(['body.category', 'body.title']);

    const blank = await upload(kb.app, token, { file: 'Some text.\n', title: '   ' });
    expect(errorOf(blank, 422).details).toEqual([expect.objectContaining({ field: 'body.title' })]);
  });

  it('an unknown field or file field is 422', async () => {
    const unknown = await uploadParts(kb.app, token, [
      { name: 'title', value: 'T' },
      { name: 'category', value: 'c' },
      { name: 'author', value: 'me' },
      { name: 'file', filename: 'a.txt', content: 'Some text.\n' },
    ]);
    expect(errorOf(unknown, 422).details).toEqual([
      expect.objectContaining({ field: 'body.author' }),
    ]);
    const wrongFile = await uploadParts(kb.app, token, [
      { name: 'title', value: 'T' },
      { name: 'category', value: 'c' },
      { name: 'attachment', filename: 'a.txt', content: 'Some text.\n' },
    ]);
    expect(errorOf(wrongFile, 422).details).toEqual([
      expect.objectContaining({ field: 'body.attachment' }),
    ]);
  });

  it('two files are 422', async () => {
    const res = await uploadParts(kb.app, token, [
      { name: 'title', value: 'T' },
      { name: 'category', value: 'c' },
      { name: 'file', filename: 'a.txt', content: 'First text.\n' },
      { name: 'file', filename: 'b.txt', content: 'Second text.\n' },
    ]);
    expect(errorOf(res, 422).code).toBe('VALIDATION_ERROR');
  });

  it('a JSON body is 415', async () => {
    const res = await kb.app.inject({
      method: 'POST',
      url: '/api/admin/kb/documents',
      headers: bearer(token),
      payload: { title: 'T', category: 'c', file: 'text' },
    });
    expect(errorOf(res, 415).code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it.each([
    ['no boundary in the body', 'multipart/form-data; boundary=xyz', 'not multipart at all'],
    ['no boundary parameter', 'multipart/form-data', '--x\r\n'],
    [
      'a body cut off mid-part',
      'multipart/form-data; boundary=xyz',
      '--xyz\r\ncontent-disposition: form-data; name="title"\r\n\r\nT',
    ],
  ])('a malformed multipart body (%s) is 422, not 500', async (_case, contentType, payload) => {
    const res = await kb.app.inject({
      method: 'POST',
      url: '/api/admin/kb/documents',
      headers: { ...bearer(token), 'content-type': contentType },
      payload,
    });
    expect(errorOf(res, 422).code).toBe('VALIDATION_ERROR');
  });

  it('a registration that fails after the file was stored removes the stored file (500)', async () => {
    // Fault injection on this test's own database: the document insert fails.
    const db = kb.deps.database.db;
    await db.execute(
      sql`alter table kb_documents add constraint test_refuse check (title <> 'Refused')`,
    );
    try {
      const res = await upload(kb.app, token, { file: 'Some text.\n', title: 'Refused' });
      expect(errorOf(res, 500).code).toBe('INTERNAL_ERROR');
    } finally {
      await db.execute(sql`alter table kb_documents drop constraint test_refuse`);
    }
    const leftover = await filesUnder(filesDir(kb.deps));
    // Not inherited by the next tests, whatever this one finds.
    await rm(path.join(filesDir(kb.deps), 'kb'), { recursive: true, force: true });
    expect(leftover, 'the stored original was orphaned').toEqual([]);
  });

  describe('over a real socket', () => {
    let port: number;
    beforeAll(async () => {
      await kb.app.listen({ port: 0, host: '127.0.0.1' });
      port = (kb.app.server.address() as AddressInfo).port;
    });

    it('a 51 MB file sent chunked is 413 once 50 MB have arrived, and the connection closes', async () => {
      const result = await streamUpload(port, token, {
        fileSize: 51 * MB,
        fill: 0x61, // 'a': valid text, so only the size can reject it
        slowAfter: 50 * MB,
        slowMs: 100,
        chunked: true,
      });
      expect(result.status, result.body).toBe(413);
      const body = JSON.parse(result.body) as { success: boolean; error: { code: string } };
      expect(body).toMatchObject({ success: false, error: { code: 'PAYLOAD_TOO_LARGE' } });
      expect(result.headers.connection).toBe('close');
      expect(result.sentAtResponse).toBeGreaterThan(50 * MB);
      expect(result.sentAtResponse).toBeLessThan(result.total);
      await result.closed;
    });

    it('a 51 MB file announced by Content-Length is 413 before its body is read', async () => {
      const result = await streamUpload(port, token, {
        fileSize: 51 * MB,
        fill: 0x61,
        slowAfter: 0,
        slowMs: 5,
      });
      expect(result.status, result.body).toBe(413);
      expect(result.sentAtResponse).toBeLessThan(10 * MB);
      await result.closed;
    });

    it('a 300 MB file announced by Content-Length is 413 before its body is read', async () => {
      const result = await streamUpload(port, token, {
        fileSize: 300 * MB,
        fill: 0x61,
        slowAfter: 0,
        slowMs: 5,
      });
      expect(result.status, result.body).toBe(413);
      expect(result.headers.connection).toBe('close');
      // Only socket buffers (a few MB at most) can hold what the server never read.
      expect(result.sentAtResponse).toBeLessThan(10 * MB);
      await result.closed;
    });

    it('a Content-Length of 2 GB is 413 at once', async () => {
      const result = await streamUpload(port, token, {
        fileSize: 20 * MB,
        fill: 0x61,
        slowAfter: 0,
        slowMs: 5,
        declared: 2048 * MB,
      });
      expect(result.status, result.body).toBe(413);
      expect(result.sentAtResponse).toBeLessThan(10 * MB);
      await result.closed;
    });

    it.each([
      ['a chunked 300 MB file', false],
      ['a chunked 300 MB file that never ends its form', true],
    ])('%s is 413 once the limit is crossed, not read to its end', async (_name, unterminated) => {
      const result = await streamUpload(port, token, {
        fileSize: 300 * MB,
        fill: 0x61,
        slowAfter: 60 * MB,
        slowMs: 20,
        chunked: true,
        unterminated,
      });
      expect(result.status, result.body).toBe(413);
      expect(JSON.parse(result.body)).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } });
      expect(result.headers.connection).toBe('close');
      expect(result.sentAtResponse).toBeGreaterThan(50 * MB);
      expect(result.sentAtResponse).toBeLessThan(60 * MB);
      await result.closed;
    });

    it('a 51 MB binary is 415 long before the client could have sent it', async () => {
      const result = await streamUpload(port, token, {
        fileSize: 51 * MB,
        fill: 0x00,
        slowAfter: 30 * MB,
        slowMs: 100,
        chunked: true, // no Content-Length to refuse it by
      });
      expect(result.status, result.body).toBe(415);
      // Only socket buffers (a few MB at most) can hold what the server no longer reads.
      expect(result.sentAtResponse).toBeLessThan(31 * MB);
      await result.closed;
    });

    it('a PDF just under the limit still uploads', async () => {
      const pdf = await pdfFromPages([[{ paragraph: 'Small PDF under the limit.' }]]);
      const res = await upload(kb.app, token, { file: pdf, filename: 'ok.pdf', title: 'Ok' });
      expect(res.statusCode, res.body).toBe(202);
      // Leave nothing for the afterEach check.
      const id = (JSON.parse(res.body) as { data: { id: string } }).data.id;
      const del = await kb.app.inject({
        method: 'DELETE',
        url: `/api/admin/kb/documents/${id}`,
        headers: bearer(token),
      });
      expect(del.statusCode, del.body).toBe(200);
    });
  });
});
