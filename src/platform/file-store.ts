import { randomUUID } from 'node:crypto';
import {
  access,
  constants,
  mkdir,
  open,
  rename,
  rm,
  stat,
  type FileHandle,
} from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../config.js';
import { WebDavStore } from './webdav-store.js';

/** Where uploaded originals live: a local directory by default, WebDAV (Nextcloud) when set. */
export interface FileStore {
  readonly kind: 'local-directory' | 'webdav';
  /** Streams `body` to `key`; resolves with bytes written. Partial writes are cleaned up on failure. */
  put(
    key: string,
    body: NodeJS.ReadableStream | AsyncIterable<Buffer>,
    options?: { signal?: AbortSignal },
  ): Promise<{ size: number }>;
  /** A stream of the stored bytes; FileStoreError code 'not_found' when absent. */
  get(key: string, options?: { signal?: AbortSignal }): Promise<NodeJS.ReadableStream>;
  /** Idempotent: deleting an absent key succeeds. */
  delete(key: string): Promise<void>;
  /** Throws when the store is unusable. */
  probe(): Promise<void>;
}

export type FileStoreErrorCode =
  'not_found' | 'unauthorized' | 'forbidden' | 'unavailable' | 'timeout' | 'failed';

/**
 * A storage-side failure. Errors of the caller's own source stream (for example an upload cut off
 * for being too large) and aborts by the caller's signal are passed through unchanged instead, so
 * the caller can still tell them apart.
 */
export class FileStoreError extends Error {
  constructor(
    readonly code: FileStoreErrorCode,
    message: string,
    /** The HTTP status the WebDAV server answered, when it answered. */
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'FileStoreError';
  }
}

/**
 * Keys are relative slash-separated paths such as `kb/<document-id>/original`. They come from our
 * own code, so a bad one is a programming error and throws, rather than becoming a 4xx.
 */
export function keySegments(key: string): string[] {
  const segments = key.split('/');
  const bad =
    key.length === 0 ||
    key.length > 1024 ||
    key.includes('\\') ||
    key.includes('\0') ||
    segments.some((s) => s === '' || s === '.' || s === '..');
  if (bad) throw new TypeError(`invalid file store key ${JSON.stringify(key)}`);
  return segments;
}

export interface SourceState {
  size: number;
  /** Set when the caller's source failed (as opposed to the store). */
  sourceError?: Error;
}

/**
 * Passes `body` through as Buffers, counting bytes. A failure of the source itself is recorded in
 * `state.sourceError` so the store can rethrow it as it was rather than as a storage failure.
 */
export async function* countBytes(
  body: NodeJS.ReadableStream | AsyncIterable<Buffer>,
  state: SourceState,
  onChunk?: () => void,
): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of body as AsyncIterable<Buffer | string>) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      state.size += buf.length;
      onChunk?.();
      yield buf;
    }
  } catch (err) {
    state.sourceError = err instanceof Error ? err : new Error(String(err), { cause: err });
    throw err;
  }
}

/**
 * `work`, or the abort reason as soon as `signal` fires. pipeline() itself waits for its source to
 * settle, and a stalled source (a client that stopped sending) may never do so.
 */
async function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  work.catch(() => undefined); // it may settle after we stopped waiting
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => {
      reject(signal.reason as Error);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}

const notFound = (key: string) => new FileStoreError('not_found', `no stored file ${key}`);

const errnoOf = (err: unknown): string | undefined =>
  err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;

/**
 * Files under one directory (`DATA_DIR/files`). Each put writes a temporary file beside the target
 * and renames it into place, so a reader sees the old bytes or the new ones, never half a file.
 */
export class LocalDirectoryStore implements FileStore {
  readonly kind = 'local-directory';
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  private pathOf(key: string): string {
    return path.join(this.root, ...keySegments(key));
  }

  async put(
    key: string,
    body: NodeJS.ReadableStream | AsyncIterable<Buffer>,
    options: { signal?: AbortSignal } = {},
  ): Promise<{ size: number }> {
    const target = this.pathOf(key);
    // A dot name with a random part: never mistaken for a stored key, never shared by two writers.
    const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomUUID()}.tmp`);
    const state: SourceState = { size: 0 };
    try {
      // 0700/0600: originals may hold patient data; nobody else on the host needs to read them.
      await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      // Created before any byte is read, so the clean-up below always finds it.
      const handle = await open(temp, 'wx', 0o600);
      const signal = options.signal === undefined ? [] : [{ signal: options.signal }];
      // The stream owns the handle and closes it; `flush` puts the bytes on disk before the
      // rename makes them visible.
      const writing = pipeline(
        countBytes(body, state),
        handle.createWriteStream({ flush: true }),
        ...signal,
      );
      await untilAborted(writing, options.signal);
      await rename(temp, target);
      return { size: state.size };
    } catch (err) {
      await rm(temp, { force: true });
      if (state.sourceError !== undefined) throw state.sourceError;
      if (options.signal?.aborted === true) throw options.signal.reason;
      const message = `could not store ${key}: ${errnoOf(err) ?? 'error'}`;
      throw new FileStoreError('failed', message, undefined, { cause: err });
    }
  }

  async get(key: string, options: { signal?: AbortSignal } = {}): Promise<NodeJS.ReadableStream> {
    const file = this.pathOf(key);
    let handle: FileHandle;
    let isFile: boolean;
    try {
      handle = await open(file, 'r');
    } catch (err) {
      const code = errnoOf(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') throw notFound(key);
      throw new FileStoreError('failed', `could not read ${key}: ${code ?? 'error'}`, undefined, {
        cause: err,
      });
    }
    try {
      // Opening a directory succeeds on Linux; a key naming one holds no stored bytes.
      isFile = (await handle.stat()).isFile();
    } catch (err) {
      await handle.close();
      throw new FileStoreError('failed', `could not read ${key}`, undefined, { cause: err });
    }
    if (!isFile) {
      await handle.close();
      throw notFound(key);
    }
    return handle.createReadStream(options.signal === undefined ? {} : { signal: options.signal });
  }

  async delete(key: string): Promise<void> {
    // Empty directories are left behind on purpose: removing them could race a put into the same one.
    await rm(this.pathOf(key), { force: true });
  }

  async probe(): Promise<void> {
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    if (!(await stat(this.root)).isDirectory()) throw new Error(`${this.root} is not a directory`);
    await access(this.root, constants.R_OK | constants.W_OK);
  }
}

/** The store the configuration asks for: WebDAV when NEXTCLOUD_URL is set, else the local one. */
export function createFileStore(config: Pick<Config, 'dataDir' | 'nextcloud'>): FileStore {
  return config.nextcloud === undefined
    ? new LocalDirectoryStore(path.join(config.dataDir, 'files'))
    : new WebDavStore(config.nextcloud);
}
