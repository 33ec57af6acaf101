import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { AppError } from '../../errors.js';
import type { Logger } from '../../platform/logger.js';
import type { Metrics } from '../../platform/metrics.js';
import type { Outages } from '../../platform/outages.js';
import type { PubSub } from '../../platform/pubsub.js';
import type { RateLimiter, RateLimitRule } from '../../platform/rate-limit.js';
import type { SocketTracker } from '../admin/socket-registry.js';
import type { AuthService, AuthUser } from '../auth/service.js';
import { ChatConnection, CLOSE } from './connection.js';
import { userChannel, type UserEvent } from './channels.js';
import type { ChatService } from './service.js';

export const CHAT_PATHS = ['/ws', '/api/realtime/ws'] as const;

export interface SocketLimits {
  /** Frames larger than this are refused unread (the socket stays open). */
  maxFrameBytes: number;
  /** Frames larger than this end the connection (1009): ws stops reading them. */
  hardFrameBytes: number;
  /** Bytes queued for a client that does not read before its socket closes (1013). */
  sendBufferBytes: number;
  idleMs: number;
  maxSocketsPerUser: number;
  sendsPerMinute: number;
}

export const SOCKET_LIMITS: SocketLimits = {
  maxFrameBytes: 64 * 1024,
  hardFrameBytes: 1024 * 1024,
  sendBufferBytes: 1024 * 1024,
  idleMs: 90_000,
  maxSocketsPerUser: 20,
  sendsPerMinute: 30,
};

export interface HubDeps {
  auth: AuthService;
  chat: ChatService;
  pubsub: PubSub;
  rateLimiter: RateLimiter | null;
  metrics: Metrics;
  /** The shared socket registry (admin panel's websocket-status). */
  sockets: SocketTracker;
  log: Logger;
  /** Lost dependencies: what a failed frame is told (SERVICE_UNAVAILABLE), logged once. */
  outages: Outages;
  limits?: SocketLimits;
}

/**
 * The chat sockets of this instance: the upgrade with its token check, the per-user registry
 * (limit, typing fan-out, `message_done` to the user's other sockets across instances through
 * the user's pub/sub channel), idle sweeping and shutdown.
 */
export class SocketHub {
  readonly limits: SocketLimits;
  readonly chat: ChatService;
  readonly log: Logger;
  readonly outages: Outages;
  readonly metrics: Metrics;
  private readonly wss: WebSocketServer;
  private readonly byUser = new Map<
    string,
    { sockets: Set<ChatConnection>; off: Promise<() => void> }
  >();
  private readonly sweeper: NodeJS.Timeout;
  private readonly sendRule: RateLimitRule;

  constructor(private readonly deps: HubDeps) {
    this.limits = deps.limits ?? SOCKET_LIMITS;
    this.chat = deps.chat;
    this.log = deps.log;
    this.outages = deps.outages;
    this.metrics = deps.metrics;
    this.sendRule = { name: 'chat_send', max: this.limits.sendsPerMinute, windowSeconds: 60 };
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: this.limits.hardFrameBytes,
      perMessageDeflate: false,
      clientTracking: false,
    });
    this.sweeper = setInterval(
      () => {
        this.sweep();
      },
      Math.min(5000, this.limits.idleMs / 3),
    );
    this.sweeper.unref();
  }

  /** Takes an HTTP upgrade for one of CHAT_PATHS. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, endpoint: string): void {
    const token = new URL(req.url ?? '/', 'http://x').searchParams.get('token') ?? '';
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      void this.accept(ws, token, endpoint);
    });
  }

  /** Typing of one socket, to the user's other sockets on every instance. */
  typing(from: ChatConnection, conversationId: string, active: boolean): void {
    const event: UserEvent = {
      kind: 'typing',
      from: from.id,
      conversation_id: conversationId,
      active,
    };
    this.deps.pubsub.publish(userChannel(from.user.id), event);
  }

  /** Before a `message_send`: the token still holds and the user is within the send rate. */
  async admitSend(user: AuthUser, token: string): Promise<void> {
    await this.deps.auth.authenticate(token);
    const result =
      this.deps.rateLimiter === null
        ? null
        : await this.deps.rateLimiter.hit(this.sendRule, `user:${user.id}`);
    if (result !== null && !result.allowed) {
      const seconds = Math.max(1, result.resetAt - Math.floor(Date.now() / 1000));
      throw new AppError(
        'RATE_LIMITED',
        `At most ${String(this.sendRule.max)} messages a minute; try again in ${String(seconds)} s`,
      );
    }
  }

  get size(): number {
    let n = 0;
    for (const entry of this.byUser.values()) n += entry.sockets.size;
    return n;
  }

  /** Tells every socket to go (1001) and waits for them to close, at most `graceMs`. */
  async close(graceMs = 2000): Promise<void> {
    clearInterval(this.sweeper);
    const closing: Promise<void>[] = [];
    for (const entry of this.byUser.values()) {
      for (const conn of entry.sockets) {
        closing.push(
          new Promise((resolve) =>
            conn.ws.once('close', () => {
              resolve();
            }),
          ),
        );
        conn.close(CLOSE.goingAway, 'Server shutting down');
      }
    }
    const grace = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([Promise.all(closing), grace]);
    for (const entry of this.byUser.values()) {
      for (const conn of entry.sockets) conn.ws.terminate();
    }
    this.wss.close();
  }

  private async accept(ws: WebSocket, token: string, endpoint: string): Promise<void> {
    let user: AuthUser;
    try {
      user = await this.deps.auth.authenticate(token);
    } catch (err) {
      const refused = this.outages.refusal(err);
      const [close, frame] =
        refused === undefined
          ? [CLOSE.unauthorized, unauthorizedFrame(err)]
          : [CLOSE.unavailable, { code: refused.code, message: refused.message }];
      ws.send(JSON.stringify({ type: 'error', ...frame, recoverable: false }));
      ws.close(close, refused === undefined ? 'Unauthorized' : 'Service unavailable');
      return;
    }
    const conn = new ChatConnection(ws, user, endpoint, token, this);
    const entry = this.entryFor(user.id);
    if (entry.sockets.size >= this.limits.maxSocketsPerUser) {
      const max = String(this.limits.maxSocketsPerUser);
      conn.error('RATE_LIMITED', `At most ${max} open sockets per user`, undefined, false);
      conn.close(CLOSE.tooManySockets, 'Too many sockets');
      this.release(user.id);
      return;
    }
    entry.sockets.add(conn);
    this.deps.metrics.wsConnections.inc({ endpoint });
    this.deps.sockets.opened(endpoint, user.id);
    const opened = Date.now();
    // Ids, endpoint and close code only: never the URL (it holds the token) nor any frame.
    this.log.info({ connectionId: conn.id, userId: user.id, endpoint }, 'chat socket opened');
    ws.on('close', (code: number) => {
      this.log.info(
        { connectionId: conn.id, userId: user.id, endpoint, code, ms: Date.now() - opened },
        'chat socket closed',
      );
      conn.dispose();
      entry.sockets.delete(conn);
      this.deps.metrics.wsConnections.dec({ endpoint });
      this.deps.sockets.closed(endpoint, user.id);
      this.release(user.id);
    });
    ws.on('error', () => undefined);
    conn.start();
  }

  private entryFor(userId: string) {
    let entry = this.byUser.get(userId);
    if (entry === undefined) {
      const sockets = new Set<ChatConnection>();
      const off = this.deps.pubsub.subscribe(userChannel(userId), (payload) => {
        this.onUserEvent(sockets, payload as UserEvent);
      });
      entry = { sockets, off };
      this.byUser.set(userId, entry);
    }
    return entry;
  }

  private release(userId: string): void {
    const entry = this.byUser.get(userId);
    if (entry === undefined || entry.sockets.size > 0) return;
    this.byUser.delete(userId);
    void entry.off.then((off) => {
      off();
    });
  }

  private onUserEvent(sockets: Set<ChatConnection>, event: UserEvent): void {
    for (const conn of sockets) {
      if (event.kind === 'typing') {
        if (conn.id === event.from) continue;
        conn.send({
          type: 'typing',
          conversation_id: event.conversation_id,
          user_id: conn.user.id,
          active: event.active,
        });
      } else if (!conn.follows(event.frame.message.id)) {
        conn.send(event.frame);
      }
    }
  }

  private sweep(): void {
    const idleSince = Date.now() - this.limits.idleMs;
    for (const entry of this.byUser.values()) {
      for (const conn of entry.sockets) {
        if (conn.lastSeen < idleSince) conn.close(CLOSE.idle, 'Idle for too long');
      }
    }
  }
}

const unauthorizedFrame = (err: unknown) => ({
  code: 'UNAUTHORIZED',
  message: err instanceof AppError ? err.message : 'Authentication required',
});
