import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { causeCode, drain, failure, IdleTimer, showPath } from './webdav-http.js';
import {
  countBytes,
  FileStoreError,
  keySegments,
  type FileStore,
  type SourceState,
} from './file-store.js';

export interface WebDavStoreOptions {
  /** Base URL of the user's files, e.g. `https://cloud.example/remote.php/dav/files/<user>`. */
  url: string;
  user: string;
  password: string;
  /** Folder under `url` that holds every key, e.g. `/medical-assistant`. */
  root: string;
  /** Longest wait without progress: for an answer, or for the next chunk of an upload. */
  timeoutMs?: number;
}

type Method = 'GET' | 'PUT' | 'DELETE' | 'MKCOL' | 'MOVE' | 'PROPFIND';

interface SendInit {
  headers?: Record<string, string>;
  body?: string | AsyncIterable<Uint8Array>;
  signal?: AbortSignal | undefined;
}

const PROPFIND_BODY =
  '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop>' +
  '<d:resourcetype/><d:getcontentlength/></d:prop></d:propfind>';

/**
 * A FileStore on a WebDAV server (Nextcloud), written against fetch so nothing else is needed.
 * Uploads stream to a temporary name in the target folder and are then MOVEd over the target,
 * so readers never see half a file. The temporary name avoids `.part`, which Nextcloud refuses.
 */
export class WebDavStore implements FileStore {
  readonly kind = 'webdav';
  private readonly base: string;
  private readonly origin: string;
  private readonly root: string[];
  private readonly authorization: string;
  private readonly timeoutMs: number;

  constructor(options: WebDavStoreOptions) {
    const url = new URL(options.url);
    url.search = '';
    url.hash = '';
    this.base = url.href.endsWith('/') ? url.href : `${url.href}/`;
    this.origin = url.origin;
    this.root = options.root.split('/').filter((s) => s !== '');
    this.authorization = `Basic ${Buffer.from(`${options.user}:${options.password}`).toString('base64')}`;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  async put(
    key: string,
    body: NodeJS.ReadableStream | AsyncIterable<Buffer>,
    options: { signal?: AbortSignal } = {},
  ): Promise<{ size: number }> {
    const target = [...this.root, ...keySegments(key)];
    const folder = target.slice(0, -1);
    const temp = [...folder, `.${target.at(-1) ?? ''}.${randomUUID()}.upload`];
    // A streamed body cannot be sent twice, so the folder is made before the PUT rather than
    // after a 409 (one MKCOL; 405 when it already exists).
    await this.ensureFolder(folder, options.signal);
    const state: SourceState = { size: 0 };
    const timer = new IdleTimer(this.timeoutMs);
    try {
      const res = await this.send(
        'PUT',
        temp,
        {
          headers: { 'content-type': 'application/octet-stream' },
          body: countBytes(body, state, () => {
            timer.touch();
          }),
          signal: options.signal,
        },
        timer,
      );
      if (res.status !== 201 && res.status !== 204 && res.status !== 200) {
        throw await failure(res, `WebDAV PUT ${showPath(temp)}`);
      }
      await drain(res);
      // Some front ends drop chunked request bodies silently; the stored size tells.
      const stored = await this.storedSize(temp, options.signal);
      if (stored !== undefined && stored !== state.size) {
        throw new FileStoreError(
          'failed',
          `WebDAV stored ${stored} of ${state.size} bytes of ${key}`,
        );
      }
      await this.move(temp, target, options.signal);
      return { size: state.size };
    } catch (err) {
      await this.discard(temp);
      if (state.sourceError !== undefined) throw state.sourceError;
      throw err;
    }
  }

  async get(key: string, options: { signal?: AbortSignal } = {}): Promise<NodeJS.ReadableStream> {
    const path = [...this.root, ...keySegments(key)];
    const res = await this.send('GET', path, { signal: options.signal });
    if (res.status === 404) {
      await drain(res);
      throw new FileStoreError('not_found', `no stored file ${key}`, 404);
    }
    if (res.status !== 200 || res.body === null) {
      throw await failure(res, `WebDAV GET ${showPath(path)}`);
    }
    return Readable.fromWeb(res.body);
  }

  async delete(key: string): Promise<void> {
    await this.remove([...this.root, ...keySegments(key)]);
  }

  private async remove(path: string[]): Promise<void> {
    const res = await this.send('DELETE', path, {});
    if (res.ok || res.status === 404) return drain(res);
    throw await failure(res, `WebDAV DELETE ${showPath(path)}`);
  }

  /**
   * Removes the temporary of a failed upload, best effort and not under the caller's signal (which
   * may be why the upload failed). The server can still be busy with the cut-off PUT and create
   * the file again after a first DELETE succeeded, so DELETE is repeated a few times later on.
   */
  private async discard(path: string[]): Promise<void> {
    const again = (delays: number[]): void => {
      const [delay, ...rest] = delays;
      if (delay === undefined) return;
      const timer = setTimeout(() => {
        void this.remove(path).then(
          () => {
            again(rest);
          },
          () => undefined,
        );
      }, delay);
      timer.unref(); // never keeps a process alive that is otherwise done
    };
    await this.remove(path).catch(() => undefined);
    again([250, 1000, 5000]);
  }

  /** The root folder answers with the credentials given; made when it does not exist yet. */
  async probe(): Promise<void> {
    const res = await this.propfind(this.root, undefined, true);
    if (res.status === 404) {
      await drain(res);
      await this.ensureFolder(this.root);
      return;
    }
    if (res.status !== 207) throw await failure(res, `WebDAV PROPFIND ${showPath(this.root)}/`);
    if (!/<(?:[\w-]+:)?collection\b/.test(await res.text())) {
      throw new FileStoreError('failed', `WebDAV ${showPath(this.root)} is not a folder`, 207);
    }
  }

  /** MKCOL from the deepest folder up: usually one request, as only the last folder is new. */
  private async ensureFolder(path: string[], signal?: AbortSignal): Promise<void> {
    if (path.length === 0) return;
    let res = await this.send('MKCOL', path, { signal }, undefined, true);
    if (res.status === 409) {
      await drain(res);
      await this.ensureFolder(path.slice(0, -1), signal);
      res = await this.send('MKCOL', path, { signal }, undefined, true);
    }
    // 405: the folder exists already (or another writer made it just now).
    if (res.status !== 201 && res.status !== 405) {
      throw await failure(res, `WebDAV MKCOL ${showPath(path)}/`);
    }
    await drain(res);
  }

  private async move(from: string[], to: string[], signal?: AbortSignal): Promise<void> {
    const headers = { destination: this.urlOf(to), overwrite: 'T' };
    let res = await this.send('MOVE', from, { headers, signal });
    if (res.status === 409) {
      // The target folder vanished after the upload began (deleted by someone else): make it again.
      await drain(res);
      await this.ensureFolder(to.slice(0, -1), signal);
      res = await this.send('MOVE', from, { headers, signal });
    }
    if (res.status !== 201 && res.status !== 204) {
      throw await failure(res, `WebDAV MOVE ${showPath(from)}`);
    }
    await drain(res);
  }

  private async storedSize(path: string[], signal?: AbortSignal): Promise<number | undefined> {
    const res = await this.propfind(path, signal);
    if (res.status !== 207) throw await failure(res, `WebDAV PROPFIND ${showPath(path)}`);
    const match = /getcontentlength[^>]*>\s*(\d+)\s*</.exec(await res.text());
    return match?.[1] === undefined ? undefined : Number(match[1]);
  }

  private propfind(path: string[], signal?: AbortSignal, folder = false): Promise<Response> {
    const headers = { depth: '0', 'content-type': 'application/xml; charset=utf-8' };
    return this.send('PROPFIND', path, { headers, body: PROPFIND_BODY, signal }, undefined, folder);
  }

  private urlOf(path: string[], folder = false): string {
    return this.base + path.map(encodeURIComponent).join('/') + (folder ? '/' : '');
  }

  /** One request; failures to get an answer at all become FileStoreErrors, answers are returned. */
  private async send(
    method: Method,
    path: string[],
    init: SendInit,
    timer = new IdleTimer(this.timeoutMs),
    folder = false,
  ): Promise<Response> {
    const what = `WebDAV ${method} ${showPath(path)}${folder ? '/' : ''}`;
    const signals = init.signal === undefined ? [timer.signal] : [timer.signal, init.signal];
    try {
      return await fetch(this.urlOf(path, folder), {
        method,
        headers: { authorization: this.authorization, ...init.headers },
        ...(init.body === undefined ? {} : { body: init.body, duplex: 'half' as const }),
        signal: AbortSignal.any(signals),
        // Following a redirect would resend the credentials and cannot replay a streamed body.
        redirect: 'manual',
      });
    } catch (err) {
      if (init.signal?.aborted === true) throw init.signal.reason;
      const cause = { cause: err };
      if (timer.signal.aborted) {
        const message = `${what}: no progress for ${this.timeoutMs} ms`;
        throw new FileStoreError('timeout', message, undefined, cause);
      }
      const message = `${what}: ${this.origin} unreachable (${causeCode(err)})`;
      throw new FileStoreError('unavailable', message, undefined, cause);
    } finally {
      // After the answer's headers, the caller's signal alone governs reading the body.
      timer.clear();
    }
  }
}
