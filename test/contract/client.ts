import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/** A request exactly as it goes on the wire: the path is sent as given (already encoded). */
export interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface WireResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A keep-alive HTTP/1.1 client, as most API clients are: requests reuse a few connections, so an
 * answer that leaves a connection unusable (a body left unread, a close the client could not see
 * coming) shows up as a failed request, not as a pass.
 */
export class KeepAliveClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 2 });

  constructor(private readonly port: number) {}

  send(req: WireRequest, timeoutMs = 15_000): Promise<WireResponse> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { ...req.headers };
      if (req.body !== undefined) headers['content-length'] = String(req.body.length);
      const outgoing = httpRequest(
        {
          host: '127.0.0.1',
          port: this.port,
          method: req.method,
          path: req.path,
          headers,
          agent: this.agent,
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks),
            });
          });
          res.on('error', reject);
        },
      );
      outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      outgoing.on('error', reject);
      outgoing.end(req.body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
