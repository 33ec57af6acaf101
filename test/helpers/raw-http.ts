import { connect, type Socket } from 'node:net';

/** One HTTP/1.1 response as it came off the wire (bodies framed by Content-Length only). */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/**
 * A plain TCP connection speaking HTTP/1.1 by hand, to see exactly what the server does with the
 * connection: which answers arrive on it, and whether and when the server closes it.
 */
export class RawConnection {
  /** Bytes written so far (request heads and bodies). */
  sent = 0;
  /** Set once the server ended or reset the connection. */
  closedBy: 'end' | 'error' | null = null;
  readonly closed: Promise<void>;
  #buffer = Buffer.alloc(0);
  #wake: (() => void) | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (data: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, data]);
      this.#wake?.();
    });
    this.closed = new Promise((resolve) => {
      socket.on('end', () => {
        this.closedBy ??= 'end';
        resolve();
        this.#wake?.();
      });
      socket.on('error', () => {
        // A write into a connection the server closed: expected in the tests that close early.
        this.closedBy ??= 'error';
        resolve();
        this.#wake?.();
      });
    });
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
      socket.once('connect', () => {
        resolve(new RawConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  /** Writes and waits until the bytes are handed to the kernel; false once the connection failed. */
  write(data: string | Buffer): Promise<boolean> {
    if (this.closedBy === 'error' || this.socket.destroyed) return Promise.resolve(false);
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    this.sent += bytes.length;
    return new Promise((resolve) => {
      this.socket.write(bytes, (err) => {
        resolve(err == null);
      });
    });
  }

  /** The next complete response, or an error when none arrives within `timeoutMs`. */
  async next(timeoutMs = 5000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const response = this.#take();
      if (response !== null) return response;
      if (this.closedBy !== null)
        throw new Error(`connection closed (${this.closedBy}), no answer`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no answer within ${String(timeoutMs)} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
  }

  /** True when no answer is waiting and the server has not closed the connection. */
  get idle(): boolean {
    return this.#buffer.length === 0 && this.closedBy === null && !this.socket.destroyed;
  }

  close(): void {
    this.socket.destroy();
  }

  #take(): RawResponse | null {
    const end = this.#buffer.indexOf(HEAD_END);
    if (end < 0) return null;
    const [statusLine = '', ...lines] = this.#buffer
      .subarray(0, end)
      .toString('latin1')
      .split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length']);
    if (!Number.isSafeInteger(length))
      throw new Error(`answer without content-length: ${statusLine}`);
    const bodyStart = end + HEAD_END.length;
    if (this.#buffer.length < bodyStart + length) return null;
    const body = this.#buffer.subarray(bodyStart, bodyStart + length).toString('utf8');
    this.#buffer = this.#buffer.subarray(bodyStart + length);
    return { status: Number(statusLine.split(' ')[1]), headers, body };
  }
}

/** A request head for `conn.write`; `content-length` or `transfer-encoding` go in `headers`. */
export function requestHead(
  method: string,
  path: string,
  headers: Record<string, string | number> = {},
): string {
  const lines = Object.entries({ host: '127.0.0.1', ...headers }).map(([k, v]) => `${k}: ${v}`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/** One chunk of a chunked request body (an empty one ends the body). */
export const chunk = (data: Buffer | string): Buffer => {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  return Buffer.concat([
    Buffer.from(`${bytes.length.toString(16)}\r\n`),
    bytes,
    Buffer.from('\r\n'),
  ]);
};
