import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP server standing in for an OpenAI-compatible endpoint (`baseUrl` ends in `/v1`):
 * each request takes the next scripted reply, and every request is recorded. Subclasses say how a
 * request is read and answered.
 */
export abstract class ScriptedServer<Reply, Recorded> {
  readonly requests: Recorded[] = [];
  protected readonly replies: Reply[] = [];
  #server: Server | undefined;
  baseUrl = '';

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      void this.handle(req, res);
    });
    const server = this.#server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** Replies for the next requests, in order. */
  script(...replies: Reply[]): void {
    this.replies.length = 0;
    this.requests.length = 0;
    this.replies.push(...replies);
  }

  protected abstract handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}
