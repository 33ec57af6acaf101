import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { AppError } from '../../errors.js';
import type { SocketTracker } from '../admin/socket-registry.js';
import type { AuthService, AuthUser } from '../auth/service.js';
import { CLOSE } from '../chat/connection.js';
import type { VoiceDeps } from './deps.js';
import { AUDIO_FORMAT, parseVoiceFrame, type VoiceServerFrame } from './protocol.js';
import { DEFAULT_SETTINGS, type VoiceSettings } from './sessions.js';
import { VoiceSession } from './session.js';

export const VOICE_PATHS = ['/api/voice/pipeline-ws', '/api/realtime'] as const;

export interface VoiceSocketLimits {
  maxSessionsPerUser: number;
  maxSessions: number;
  /** Frames larger than this are refused unread (the socket stays open). */
  maxFrameBytes: number;
  /** Queued, unread bytes for a client before its socket closes (1013). */
  sendBufferBytes: number;
  idleMs: number;
  /** Audio received but not yet through the detector; beyond it frames are refused. */
  maxPendingAudioBytes: number;
}

const sessionNotFound = 4404;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The voice sockets of this instance: the upgrade with its token (and optional `session_id`),
 * the limits (sessions per user and per instance, frame size, unread output, idle time), frame
 * checks (audio must be base64 of whole PCM16 samples) and shutdown.
 */
export class VoiceHub {
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: 1024 * 1024,
    perMessageDeflate: false,
    clientTracking: false,
  });
  private readonly sockets = new Map<
    WebSocket,
    { user: AuthUser; session: VoiceSession; seen: number }
  >();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly deps: VoiceDeps,
    private readonly auth: AuthService,
    readonly limits: VoiceSocketLimits,
    private readonly tracker: SocketTracker,
  ) {
    this.sweeper = setInterval(
      () => {
        this.sweep();
      },
      Math.min(5000, limits.idleMs / 3),
    );
    this.sweeper.unref();
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, endpoint: string): void {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    const token = query.get('token') ?? '';
    const sessionId = query.get('session_id');
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      void this.accept(ws, token, sessionId, endpoint);
    });
  }

  get size(): number {
    return this.sockets.size;
  }

  async close(graceMs = 2000): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.sockets.keys()];
    for (const ws of all) ws.close(CLOSE.goingAway, 'Server shutting down');
    const closed = Promise.all(all.map((ws) => new Promise((r) => ws.once('close', r))));
    await Promise.race([closed, new Promise((r) => setTimeout(r, graceMs).unref())]);
    for (const ws of all) ws.terminate();
    await Promise.allSettled([...this.sockets.values()].map((s) => s.session.close()));
    this.wss.close();
  }

  private async accept(ws: WebSocket, token: string, sessionId: string | null, endpoint: string) {
    const refuse = (code: number, error: string, message: string, reason: string) => {
      ws.send(JSON.stringify({ type: 'error', code: error, message, recoverable: false }));
      ws.close(code, reason);
    };
    let user: AuthUser;
    let settings: VoiceSettings;
    // A lost dependency (Redis for the token check and the session) is no verdict on the client.
    const unavailable = (err: unknown) => {
      const refused = this.deps.outages.refusal(err);
      if (refused !== undefined) {
        refuse(CLOSE.unavailable, refused.code, refused.message, 'Service unavailable');
      }
      return refused !== undefined;
    };
    try {
      user = await this.auth.authenticate(token);
    } catch (err) {
      if (unavailable(err)) return;
      const message = err instanceof AppError ? err.message : 'Authentication required';
      refuse(CLOSE.unauthorized, 'UNAUTHORIZED', message, 'Unauthorized');
      return;
    }
    const limit = this.overLimit(user.id);
    if (limit !== undefined) {
      refuse(CLOSE.tooManySockets, 'RATE_LIMITED', limit, 'Too many voice sessions');
      return;
    }
    try {
      settings =
        sessionId === null ? DEFAULT_SETTINGS : await this.deps.sessions.find(user.id, sessionId);
    } catch (err) {
      if (unavailable(err)) return;
      refuse(sessionNotFound, 'NOT_FOUND', 'Voice session not found or expired', 'No session');
      return;
    }
    this.open(ws, user, sessionId ?? randomUUID(), settings, endpoint);
  }

  private overLimit(userId: string): string | undefined {
    const { maxSessions, maxSessionsPerUser } = this.limits;
    if (this.sockets.size >= maxSessions)
      return 'This instance has no room for another voice session';
    let mine = 0;
    for (const s of this.sockets.values()) if (s.user.id === userId) mine += 1;
    return mine >= maxSessionsPerUser
      ? `At most ${String(maxSessionsPerUser)} voice sessions per user`
      : undefined;
  }

  private open(
    ws: WebSocket,
    user: AuthUser,
    id: string,
    settings: VoiceSettings,
    endpoint: string,
  ) {
    const send = (frame: VoiceServerFrame) => {
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > this.limits.sendBufferBytes) {
        this.deps.metrics.wsSlowReaderCloses.inc({ endpoint });
        ws.close(CLOSE.slowReader, 'Client is not reading');
        return;
      }
      ws.send(JSON.stringify(frame));
    };
    this.deps.warm();
    const session = new VoiceSession(this.deps, user, id, settings, send);
    const entry = { user, session, seen: Date.now() };
    this.sockets.set(ws, entry);
    this.deps.metrics.wsConnections.inc({ endpoint });
    this.tracker.opened(endpoint, user.id);
    const { log } = this.deps;
    // Ids and close codes only: never the URL (it holds the token), a frame or a transcript.
    log.info({ sessionId: id, userId: user.id, endpoint }, 'voice socket opened');
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      entry.seen = Date.now();
      this.receive(session, data, isBinary);
    });
    ws.on('close', (code: number) => {
      log.info({ sessionId: id, userId: user.id, endpoint, code }, 'voice socket closed');
      this.sockets.delete(ws);
      this.deps.metrics.wsConnections.dec({ endpoint });
      this.tracker.closed(endpoint, user.id);
      void session.close();
    });
    ws.on('error', () => undefined);
    send({
      type: 'connected',
      connection_id: randomUUID(),
      user_id: user.id,
      session_id: id,
      conversation_id: settings.conversationId,
      protocol_version: '1.0',
      audio_format: AUDIO_FORMAT,
      server_time: new Date().toISOString(),
    });
  }

  private receive(session: VoiceSession, data: Buffer, isBinary: boolean): void {
    const refuse = (message: string, ref?: string) => {
      session.error('VALIDATION_ERROR', message, true, ref);
    };
    if (isBinary) {
      refuse('Frames must be JSON text; audio goes in audio.input');
      return;
    }
    if (data.length > this.limits.maxFrameBytes) {
      refuse(`A frame may be at most ${String(this.limits.maxFrameBytes)} bytes; it was not read`);
      return;
    }
    const parsed = parseVoiceFrame(data.toString('utf8'));
    if (!parsed.ok) {
      refuse(parsed.message, parsed.requestRef);
      return;
    }
    const frame = parsed.frame;
    if (frame.type !== 'audio.input') {
      session.receive(frame);
      return;
    }
    if (!BASE64.test(frame.audio)) {
      refuse('audio is not base64', frame.request_ref);
      return;
    }
    const pcm = Buffer.from(frame.audio, 'base64');
    if (pcm.length % 2 !== 0) {
      refuse('audio must be whole PCM16 samples (an even number of bytes)', frame.request_ref);
      return;
    }
    if (session.pendingAudioBytes + pcm.length > this.limits.maxPendingAudioBytes) {
      session.error(
        'RATE_LIMITED',
        'Audio arrives faster than it can be heard; frame dropped',
        true,
        frame.request_ref,
      );
      return;
    }
    session.receive(frame, pcm);
  }

  /**
   * Closes the sockets silent for the idle time. One whose audio the server has not yet heard, or
   * whose answer it is still preparing or speaking, is not silent: the wait is the server's (a
   * burst of frames on a busy machine, a slow model), so its clock starts again.
   */
  private sweep(): void {
    const now = Date.now();
    for (const [ws, entry] of this.sockets) {
      if (entry.session.busy) entry.seen = now;
      else if (entry.seen < now - this.limits.idleMs) ws.close(CLOSE.idle, 'Idle for too long');
    }
  }
}
