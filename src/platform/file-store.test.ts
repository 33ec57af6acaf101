import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createFileStore,
  FileStoreError,
  LocalDirectoryStore,
  keySegments,
  type FileStore,
} from './file-store.js';

const MB = 1024 * 1024;

/** `total` random bytes in 64 KiB chunks, made as they are asked for; `hash` sees each one. */
function* randomChunks(total: number, hash?: ReturnType<typeof createHash>) {
  for (let sent = 0; sent < total;) {
    const chunk = randomBytes(Math.min(64 * 1024, total - sent));
    hash?.update(chunk);
    sent += chunk.length;
    yield chunk;
  }
}

const randomSource = (total: number, hash?: ReturnType<typeof createHash>) =>
  Readable.from(randomChunks(total, hash));

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Every regular file under `dir`, relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

describe('LocalDirectoryStore', () => {
  let dir: string;
  let store: LocalDirectoryStore;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mas-files-'));
    store = new LocalDirectoryStore(path.join(dir, 'files'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('streams a few MB in and out unchanged, into a 0600 file', async () => {
    const hash = createHash('sha256');
    const { size } = await store.put('kb/doc-1/original', randomSource(5 * MB + 123, hash));
    expect(size).toBe(5 * MB + 123);
    const back = await readAll(await store.get('kb/doc-1/original'));
    expect(back.length).toBe(size);
    expect(createHash('sha256').update(back).digest('hex')).toBe(hash.digest('hex'));
    const file = path.join(store.root, 'kb', 'doc-1', 'original');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await filesUnder(store.root)).toEqual([path.join('kb', 'doc-1', 'original')]);
  });

  it('takes a Node readable stream and string chunks too', async () => {
    expect(await store.put('a', Readable.from(['héllo ', 'wörld']))).toEqual({ size: 13 });
    expect((await readAll(await store.get('a'))).toString()).toBe('héllo wörld');
  });

  it('stores an empty body as an empty file', async () => {
    expect(await store.put('empty', Readable.from([]))).toEqual({ size: 0 });
    expect((await readAll(await store.get('empty'))).length).toBe(0);
  });

  it('replaces atomically: readers see the old bytes until the new ones are complete', async () => {
    await store.put('doc', Readable.from([Buffer.from('version one')]));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let halfway!: () => void;
    const reachedHalfway = new Promise<void>((resolve) => (halfway = resolve));
    const writing = store.put(
      'doc',
      (async function* () {
        yield Buffer.from('version ');
        halfway();
        await gate;
        yield Buffer.from('two, longer');
      })(),
    );
    await reachedHalfway;
    expect((await readAll(await store.get('doc'))).toString()).toBe('version one');
    release();
    expect(await writing).toEqual({ size: 19 });
    expect((await readAll(await store.get('doc'))).toString()).toBe('version two, longer');
    expect(await filesUnder(store.root)).toEqual(['doc']);
  });

  it('passes a failing source error through and leaves no file behind', async () => {
    const boom = new Error('client went away');
    const err = await rejection(
      store.put(
        'kb/doc-2/original',
        Readable.from(
          (function* () {
            yield* randomChunks(MB);
            throw boom;
          })(),
        ),
      ),
    );
    expect(err).toBe(boom);
    expect(await filesUnder(store.root)).toEqual([]);
  });

  it('keeps the previous version when a replacement fails', async () => {
    await store.put('doc', Readable.from([Buffer.from('kept')]));
    const source = function* () {
      yield Buffer.from('partial');
      throw new Error('cut off');
    };
    await expect(store.put('doc', Readable.from(source()))).rejects.toThrow('cut off');
    expect((await readAll(await store.get('doc'))).toString()).toBe('kept');
    expect(await filesUnder(store.root)).toEqual(['doc']);
  });

  it('stops on abort with the abort reason and cleans up', async () => {
    const controller = new AbortController();
    const reason = new Error('request aborted');
    const source = async function* () {
      yield Buffer.alloc(1000);
      controller.abort(reason);
      await new Promise(() => undefined); // the source would never finish by itself
    };
    const err = await rejection(store.put('doc', source(), { signal: controller.signal }));
    expect(err).toBe(reason);
    expect(await filesUnder(store.root)).toEqual([]);
  });

  it('answers not_found for an absent key, a folder, and a path through a file', async () => {
    await store.put('kb/x/original', Readable.from([Buffer.from('x')]));
    for (const key of ['kb/none/original', 'kb/x', 'kb/x/original/deeper']) {
      const err = await rejection(store.get(key));
      expect(err, key).toBeInstanceOf(FileStoreError);
      expect((err as FileStoreError).code, key).toBe('not_found');
    }
  });

  it('deletes idempotently', async () => {
    await store.put('kb/y/original', Readable.from([Buffer.from('y')]));
    await store.delete('kb/y/original');
    await store.delete('kb/y/original');
    await store.delete('never/stored');
    await expect(store.get('kb/y/original')).rejects.toMatchObject({ code: 'not_found' });
  });

  it.each(['', '/kb/a', 'kb/../etc', '..', 'kb/./a', 'kb//a', 'kb/a/', 'kb\\a', 'kb/a\0b'])(
    'refuses the key %j everywhere, as a programming error',
    async (key) => {
      expect(() => keySegments(key)).toThrow(TypeError);
      await expect(store.put(key, Readable.from([]))).rejects.toThrow(TypeError);
      await expect(store.get(key)).rejects.toThrow(TypeError);
      await expect(store.delete(key)).rejects.toThrow(TypeError);
      expect(await filesUnder(dir)).toEqual([]);
    },
  );

  it('probes: creates its directory, and fails where it cannot be one', async () => {
    await expect(store.probe()).resolves.toBeUndefined();
    expect((await stat(store.root)).isDirectory()).toBe(true);
    await writeFile(path.join(dir, 'not-a-dir'), 'x');
    await expect(new LocalDirectoryStore(path.join(dir, 'not-a-dir')).probe()).rejects.toThrow();
    await expect(
      new LocalDirectoryStore(path.join(dir, 'not-a-dir', 'files')).probe(),
    ).rejects.toThrow();
  });
});

describe('createFileStore', () => {
  it('uses DATA_DIR/files when NEXTCLOUD_URL is unset, WebDAV when it is set', () => {
    const local: FileStore = createFileStore({ dataDir: '/srv/data', nextcloud: undefined });
    expect(local.kind).toBe('local-directory');
    expect(local).toBeInstanceOf(LocalDirectoryStore);
    expect(local).toMatchObject({ root: path.resolve('/srv/data/files') });
    const nextcloud = { url: 'https://cloud.example/dav', user: 'u', password: 'p', root: '/x' };
    expect(createFileStore({ dataDir: '/srv/data', nextcloud }).kind).toBe('webdav');
  });
});
