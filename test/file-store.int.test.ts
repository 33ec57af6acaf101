import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileStoreError } from '../src/platform/file-store.js';
import { WebDavStore } from '../src/platform/webdav-store.js';
import { createTestApp } from './helpers/app.js';
import { startWebDav, type TestWebDav } from './helpers/webdav.js';

const MB = 1024 * 1024;
const ROOT = 'medical-assistant';

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Regular files the server holds under `dir`, relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/** Bytes the server has written so far into upload temporaries. */
async function bytesBeingUploaded(dir: string): Promise<number> {
  let total = 0;
  for (const file of await filesUnder(dir)) {
    if (file.endsWith('.upload'))
      total += (await stat(path.join(dir, file)).catch(() => null))?.size ?? 0;
  }
  return total;
}

async function waitFor(read: () => Promise<number>, enough: number, ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (value < enough && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    value = await read();
  }
  return value;
}

async function waitForZero(read: () => Promise<number>, ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (value !== 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    value = await read();
  }
  return value;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

/** A port that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('WebDavStore against a real WebDAV server', () => {
  let dav: TestWebDav;
  let store: WebDavStore;
  const storeFor = (options: { password?: string; root?: string; url?: string } = {}) =>
    new WebDavStore({
      url: options.url ?? dav.url,
      user: dav.user,
      password: options.password ?? dav.password,
      root: options.root ?? `/${ROOT}`,
      timeoutMs: 5000,
    });
  beforeAll(async () => {
    dav = await startWebDav();
    store = storeFor();
  });
  afterAll(() => dav.close());

  it('streams 12 MB up and back without holding the whole body', async () => {
    const total = 12 * MB;
    const hash = createHash('sha256');
    let onServerAtHalf = -1;
    const source = async function* () {
      for (let sent = 0; sent < total; sent += 64 * 1024) {
        // A store that collected the body before sending would leave the server empty here.
        if (sent === total / 2)
          onServerAtHalf = await waitFor(() => bytesBeingUploaded(dav.dir), MB, 3000);
        const chunk = randomBytes(64 * 1024);
        hash.update(chunk);
        yield chunk;
      }
    };
    const key = `kb/${randomUUID()}/original`;
    expect(await store.put(key, source())).toEqual({ size: total });
    expect(onServerAtHalf).toBeGreaterThanOrEqual(MB);
    expect(onServerAtHalf).toBeLessThanOrEqual(total / 2);

    const back = createHash('sha256');
    let size = 0;
    for await (const chunk of (await store.get(key)) as AsyncIterable<Buffer>) {
      back.update(chunk);
      size += chunk.length;
    }
    expect(size).toBe(total);
    expect(back.digest('hex')).toBe(hash.digest('hex'));
    expect((await stat(path.join(dav.dir, ROOT, key))).size).toBe(total);
    expect((await filesUnder(dav.dir)).filter((f) => f.endsWith('.upload'))).toEqual([]);
  });

  it('creates the root and nested folders on demand', async () => {
    const deep = storeFor({ root: '/tenants/a b/files' });
    await deep.put('kb/x/y/z/original', Readable.from([Buffer.from('deep')]));
    const file = path.join(dav.dir, 'tenants', 'a b', 'files', 'kb', 'x', 'y', 'z', 'original');
    expect(await readFile(file, 'utf8')).toBe('deep');
    expect((await readAll(await deep.get('kb/x/y/z/original'))).toString()).toBe('deep');
  });

  it('overwrites an existing key and leaves no temporary behind', async () => {
    const key = `kb/${randomUUID()}/original`;
    await store.put(key, Readable.from([Buffer.from('first version')]));
    expect(await store.put(key, Readable.from([Buffer.from('second')]))).toEqual({ size: 6 });
    expect((await readAll(await store.get(key))).toString()).toBe('second');
    const folder = path.join(dav.dir, ROOT, path.dirname(key));
    expect(await readdir(folder)).toEqual(['original']);
  });

  it('passes a failing source error through, keeps the old version, removes the partial', async () => {
    const key = `kb/${randomUUID()}/original`;
    await store.put(key, Readable.from([Buffer.from('kept')]));
    const boom = new Error('upload cut off');
    const source = function* () {
      yield randomBytes(MB);
      throw boom;
    };
    expect(await rejection(store.put(key, Readable.from(source())))).toBe(boom);
    expect((await readAll(await store.get(key))).toString()).toBe('kept');
    // The server may create the cut-off temporary after the put gave up; it goes soon after.
    const folder = path.join(dav.dir, ROOT, path.dirname(key));
    const extra = async () => (await readdir(folder)).length - 1;
    expect(await waitForZero(extra, 4000)).toBe(0);
    expect(await readdir(folder)).toEqual(['original']);
  });

  it('stops on abort with the abort reason', async () => {
    const controller = new AbortController();
    const reason = new Error('client aborted');
    const source = async function* () {
      yield randomBytes(64 * 1024);
      controller.abort(reason);
      await new Promise(() => undefined); // stalls, as a client that stopped sending
    };
    const key = `kb/${randomUUID()}/original`;
    expect(await rejection(store.put(key, source(), { signal: controller.signal }))).toBe(reason);
    await expect(store.get(key)).rejects.toMatchObject({ code: 'not_found' });
    const folder = path.join(dav.dir, ROOT, path.dirname(key));
    expect(await waitForZero(async () => (await readdir(folder)).length, 4000)).toBe(0);
  });

  it('deletes idempotently and answers not_found for what is absent', async () => {
    const key = `kb/${randomUUID()}/original`;
    await store.put(key, Readable.from([Buffer.from('bye')]));
    await store.delete(key);
    await store.delete(key);
    await store.delete('kb/never/stored');
    const err = await rejection(store.get(key));
    expect(err).toBeInstanceOf(FileStoreError);
    expect(err).toMatchObject({ code: 'not_found', status: 404 });
  });

  it('probes the root folder', async () => {
    await expect(store.probe()).resolves.toBeUndefined();
    // A root that does not exist yet is made, as the first upload would.
    await expect(storeFor({ root: '/fresh-root' }).probe()).resolves.toBeUndefined();
    expect((await stat(path.join(dav.dir, 'fresh-root'))).isDirectory()).toBe(true);
  });

  it('says clearly when the password is wrong, without repeating it', async () => {
    const password = 'wrong-password-1234';
    const wrong = storeFor({ password });
    for (const attempt of [
      () => wrong.probe(),
      () => wrong.get('kb/a/original'),
      () => wrong.put('kb/a/original', Readable.from([Buffer.from('x')])),
    ]) {
      const err = await rejection(attempt());
      expect(err).toBeInstanceOf(FileStoreError);
      expect(err).toMatchObject({ code: 'unauthorized', status: 401 });
      expect((err as Error).message).toMatch(/401.*NEXTCLOUD_USER and NEXTCLOUD_PASSWORD/);
      expect((err as Error).message).not.toContain(password);
      expect(JSON.stringify(err)).not.toContain(password);
    }
  });

  it('refuses bad keys before sending anything', async () => {
    await expect(store.put('../escape', Readable.from([]))).rejects.toThrow(TypeError);
    await expect(store.get('/abs')).rejects.toThrow(TypeError);
    await expect(store.delete('a\\b')).rejects.toThrow(TypeError);
  });
});

describe('WebDavStore when the server is not there', () => {
  it('probe throws when the server is down', async () => {
    const dav = await startWebDav();
    const store = new WebDavStore({ ...dav, root: '/x', timeoutMs: 5000 });
    await store.probe();
    await dav.close();
    const err = await rejection(store.probe());
    expect(err).toMatchObject({ code: 'unavailable', status: undefined });
    expect((err as Error).message).toMatch(/unreachable \(ECONNREFUSED\)/);
  });

  it('gives up on a server that accepts but never answers', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const store = new WebDavStore({
        url: `http://127.0.0.1:${port}/dav`,
        user: 'u',
        password: 'p',
        root: '/x',
        timeoutMs: 300,
      });
      const started = Date.now();
      expect(await rejection(store.probe())).toMatchObject({ code: 'timeout' });
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('/ready with the file store', () => {
  const readiness = async (env: Record<string, string>) => {
    const t = await createTestApp({ backend: 'pglite', env });
    try {
      const res = await t.app.inject({ method: 'GET', url: '/ready' });
      return { status: res.statusCode, kind: t.deps.files.kind, body: res.json<Ready>() };
    } finally {
      await t.close();
    }
  };
  interface Ready {
    checks: Record<string, boolean>;
    backends: Record<string, string>;
  }

  it('probes the local directory by default', async () => {
    const { status, kind, body } = await readiness({});
    expect(kind).toBe('local-directory');
    expect(status).toBe(200);
    expect(body.backends.nextcloud).toBe('local-directory');
    expect(body.checks.nextcloud).toBe(true);
  });

  it('probes the WebDAV server when NEXTCLOUD_URL is set', async () => {
    const dav = await startWebDav();
    try {
      const env = {
        NEXTCLOUD_URL: dav.url,
        NEXTCLOUD_USER: dav.user,
        NEXTCLOUD_PASSWORD: dav.password,
      };
      const { status, kind, body } = await readiness(env);
      expect(kind).toBe('webdav');
      expect(status).toBe(200);
      expect(body.backends.nextcloud).toBe('webdav');
      expect(body.checks).toEqual({ postgres: true, redis: true, qdrant: true, nextcloud: true });
      // The probe made the default root folder.
      expect((await stat(path.join(dav.dir, ROOT))).isDirectory()).toBe(true);
    } finally {
      await dav.close();
    }
  });

  it('answers 503 with nextcloud false when the WebDAV server is unreachable', async () => {
    const { status, body } = await readiness({
      NEXTCLOUD_URL: `http://127.0.0.1:${await closedPort()}/remote.php/dav/files/clinic`,
      NEXTCLOUD_USER: 'clinic',
      NEXTCLOUD_PASSWORD: 'secret',
    });
    expect(status).toBe(503);
    expect(body.backends.nextcloud).toBe('webdav');
    expect(body.checks).toEqual({ postgres: true, redis: true, qdrant: true, nextcloud: false });
  });
});
