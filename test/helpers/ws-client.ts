import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import type { App } from '../../src/platform/http/types.js';

export type Frame = Record<string, unknown> & { type: string };

/**
 * A chat socket client for tests: keeps every frame it receives, in order, and waits for the ones
 * a test expects.
 */
export class ChatClient {
  readonly frames: Frame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      this.frames.push(JSON.parse(data.toString('utf8')) as Frame);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        resolve({ code, reason: reason.toString('utf8') });
        for (const wake of this.waiters.splice(0)) wake();
      });
    });
    ws.on('error', () => undefined);
  }

  static async open(port: number, token: string | null, path = '/ws'): Promise<ChatClient> {
    const joint = path.includes('?') ? '&' : '?';
    const query = token === null ? '' : `${joint}token=${encodeURIComponent(token)}`;
    const ws = new WebSocket(`ws://127.0.0.1:${String(port)}${path}${query}`);
    const client = new ChatClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => {
        resolve();
      });
      ws.once('error', reject);
    });
    return client;
  }

  /** Opens and waits for `connected`. */
  static async connect(port: number, token: string, path = '/ws'): Promise<ChatClient> {
    const client = await ChatClient.open(port, token, path);
    await client.next((f) => f.type === 'connected');
    return client;
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** The first frame (from `from` on) that matches, waiting up to `timeoutMs`. */
  async next(match: (f: Frame) => boolean, timeoutMs = 10_000, from = 0): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.slice(from).find(match);
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (left <= 0 || this.ws.readyState === WebSocket.CLOSED) {
        throw new Error(`no matching frame; got ${JSON.stringify(this.frames.map((f) => f.type))}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends a ping and waits for its pong: every frame sent before has been handled. */
  async roundTrip(): Promise<void> {
    const ts = Math.random();
    this.send({ type: 'ping', ts });
    await this.next((f) => f.type === 'pong' && f.ts === ts);
  }

  /** Sends a `message_send` (plus `extra` fields such as `client_message_id` or `request_ref`). */
  ask(conversationId: string, content = 'Metformin?', extra: Record<string, unknown> = {}): void {
    this.send({ type: 'message_send', conversation_id: conversationId, content, ...extra });
  }

  ofType(type: string): Frame[] {
    return this.frames.filter((f) => f.type === type);
  }

  close(): void {
    this.ws.close();
  }
}

/** Closes the clients and waits until each is closed. */
export async function closeAll(clients: ChatClient[]): Promise<void> {
  for (const c of clients) c.close();
  await Promise.all(clients.map((c) => c.closed));
}

/** Listens on a free local port; returns it. */
export async function listenLocal(app: App): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

/** POST /conversations (untitled unless `title` is given); returns the new id. */
export async function newConversation(app: App, token: string, title?: string): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/conversations',
    headers: { authorization: `Bearer ${token}` },
    payload: title === undefined ? {} : { title },
  });
  if (res.statusCode !== 201) throw new Error(`conversation not created: ${res.body}`);
  return (JSON.parse(res.body) as { data: { id: string } }).data.id;
}

/** GET /conversations/{id}/messages (main branch): the stored thread, oldest first. */
export async function storedThread<M = Record<string, unknown>>(
  app: App,
  token: string,
  conversationId: string,
): Promise<M[]> {
  const res = await app.inject({
    method: 'GET',
    url: `/conversations/${conversationId}/messages`,
    headers: { authorization: `Bearer ${token}` },
  });
  if (res.statusCode !== 200) throw new Error(`thread not read: ${res.body}`);
  return (JSON.parse(res.body) as { data: { items: M[] } }).data.items;
}
