import { FileStoreError } from './file-store.js';

/** HTTP details of the WebDAV store: timeouts and turning answers into FileStoreErrors. */

/** Aborts when `touch` has not been called for `ms`; touched on every chunk of an upload. */
export class IdleTimer {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  readonly signal = this.controller.signal;

  constructor(ms: number) {
    this.timer = setTimeout(() => {
      this.controller.abort(new Error('timed out'));
    }, ms);
  }

  touch(): void {
    this.timer.refresh();
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

/** The error for an unexpected answer; what it says never includes the credentials. */
export async function failure(res: Response, what: string): Promise<FileStoreError> {
  await drain(res);
  const status = `HTTP ${res.status}${res.statusText === '' ? '' : ` ${res.statusText}`}`;
  if (res.status === 401) {
    return new FileStoreError(
      'unauthorized',
      `${what}: ${status}; check NEXTCLOUD_USER and NEXTCLOUD_PASSWORD`,
      401,
    );
  }
  if (res.status === 403) return new FileStoreError('forbidden', `${what}: ${status}`, 403);
  if (res.status === 404) return new FileStoreError('not_found', `${what}: ${status}`, 404);
  if (res.status >= 300 && res.status < 400) {
    const location = res.headers.get('location') ?? 'elsewhere';
    return new FileStoreError(
      'failed',
      `${what}: ${status} to ${location}; set NEXTCLOUD_URL to the final address`,
      res.status,
    );
  }
  const code =
    res.status === 502 || res.status === 503 || res.status === 504 ? 'unavailable' : 'failed';
  return new FileStoreError(code, `${what}: ${status}`, res.status);
}

/** Reads a (small) answer to its end so the connection can be reused. */
export async function drain(res: Response): Promise<void> {
  await res.arrayBuffer().catch(() => undefined);
}

export const showPath = (path: string[]): string => `/${path.join('/')}`;

/** `ECONNREFUSED` and the like, from undici's `TypeError: fetch failed` and its cause. */
export function causeCode(err: unknown): string {
  const cause: unknown = err instanceof Error ? err.cause : undefined;
  if (cause instanceof Error) {
    return 'code' in cause && typeof cause.code === 'string' ? cause.code : cause.message;
  }
  return err instanceof Error ? err.message : 'unknown error';
}
