import { AppError } from '../../errors.js';
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import type { AuthUser } from '../auth/service.js';
import type { Follow, Sequenced } from './answer-streams.js';
import {
  parseClientFrame,
  type AnswerFrame,
  type ClientFrame,
  type ErrorCode,
  type ServerFrame,
} from './protocol.js';
import type { SendOutcome } from './service.js';
import type { SocketHub } from './hub.js';

/** Close codes of the chat socket beyond the standard ones. */
export const CLOSE = {
  unauthorized: 4401,
  tooManySockets: 4429,
  idle: 4408,
  /** The client does not read what it is sent (RFC 6455 "try again later"). */
  slowReader: 1013,
  /** A dependency the socket needs (Redis for the token check) is lost: try again later. */
  unavailable: 1013,
  goingAway: 1001,
} as const;

/**
 * One chat socket: reads frames in order, answers each, and follows the answers it asked for
 * (sent, resumed or cancelled). Closing the socket stops following, never the answers.
 */
export class ChatConnection {
  readonly id = randomUUID();
  lastSeen = Date.now();
  private readonly following = new Map<string, () => void>();
  /** Answers this socket saw end lately: their announcement to the user's sockets is not repeated here. */
  private readonly ended: string[] = [];
  /**
   * The admission of the last `message_send`: the next one is admitted after it, so questions
   * sent on one socket take their places on a branch in the order they were sent.
   */
  private admitting: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    readonly ws: WebSocket,
    readonly user: AuthUser,
    readonly endpoint: string,
    private readonly token: string,
    private readonly hub: SocketHub,
  ) {}

  start(): void {
    this.ws.on('message', (data: Buffer, isBinary: boolean) => {
      this.lastSeen = Date.now();
      void this.receive(data, isBinary);
    });
    this.send({
      type: 'connected',
      connection_id: this.id,
      user_id: this.user.id,
      protocol_version: '1.0',
      server_time: new Date().toISOString(),
    });
  }

  /** Sends unless the client has stopped reading, in which case the socket closes (1013). */
  send(frame: ServerFrame): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    if (this.ws.bufferedAmount > this.hub.limits.sendBufferBytes) {
      this.hub.metrics.wsSlowReaderCloses.inc({ endpoint: this.endpoint });
      this.close(CLOSE.slowReader, 'Client is not reading');
      return;
    }
    this.ws.send(
      JSON.stringify(
        frame.type === 'error' ? { ...frame, recoverable: frame.recoverable ?? true } : frame,
      ),
    );
  }

  /** An `error` frame; `recoverable` false when the socket closes after it. */
  error(
    code: ErrorCode,
    message: string,
    requestRef?: string,
    recoverable = true,
    retryAfterMs?: number,
  ): void {
    this.send({
      type: 'error',
      code,
      message,
      ...(requestRef === undefined ? {} : { request_ref: requestRef }),
      recoverable,
      ...(retryAfterMs === undefined ? {} : { retry_after_ms: retryAfterMs }),
    });
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.ws.close(code, reason);
    // A client that does not answer the close handshake is cut off.
    setTimeout(() => {
      this.ws.terminate();
    }, 5000).unref();
  }

  /** The socket is gone: stop following (the answers themselves go on). */
  dispose(): void {
    this.closed = true;
    for (const stop of this.following.values()) stop();
    this.following.clear();
  }

  /** Whether this socket already gets the frames of this answer. */
  follows(messageId: string): boolean {
    return this.following.has(messageId) || this.ended.includes(messageId);
  }

  private endFollowing(messageId: string): void {
    this.following.delete(messageId);
    this.ended.push(messageId);
    if (this.ended.length > 16) this.ended.shift();
  }

  private async receive(data: Buffer, isBinary: boolean): Promise<void> {
    if (isBinary) {
      this.error('VALIDATION_ERROR', 'Frames must be JSON text');
      return;
    }
    if (data.length > this.hub.limits.maxFrameBytes) {
      const max = String(this.hub.limits.maxFrameBytes);
      this.error('PAYLOAD_TOO_LARGE', `A frame may be at most ${max} bytes; it was not read`);
      return;
    }
    const parsed = parseClientFrame(data.toString('utf8'));
    if (!parsed.ok) {
      this.error('VALIDATION_ERROR', parsed.message, parsed.requestRef);
      return;
    }
    try {
      await this.handle(parsed.frame);
    } catch (err) {
      this.failed(err, parsed.frame);
    }
  }

  private async handle(frame: ClientFrame): Promise<void> {
    switch (frame.type) {
      case 'ping':
        this.send({ type: 'pong', ts: frame.ts ?? null });
        return;
      case 'typing_start':
      case 'typing_stop':
        this.hub.typing(this, frame.conversation_id, frame.type === 'typing_start');
        return;
      case 'message_send': {
        const admitted = this.admitting.then(async () => {
          await this.hub.admitSend(this.user, this.token);
          return this.hub.chat.admit(this.user.id, frame);
        });
        this.admitting = admitted.catch(() => undefined);
        // Nothing is sent while the turn waits for the answers before it on its branch.
        this.followOutcome(await this.hub.chat.proceed(await admitted), -1);
        return;
      }
      case 'message_resume':
        this.followOutcome(
          await this.hub.chat.resume(this.user.id, frame.message_id),
          frame.after_index ?? -1,
        );
        return;
      case 'message_cancel': {
        const outcome = await this.hub.chat.cancel(this.user.id, frame.message_id);
        // Whoever cancels hears how the answer ended, whether or not it follows it.
        if (!('follow' in outcome) || !this.follows(outcome.follow))
          this.followOutcome(outcome, -1, true);
        return;
      }
    }
  }

  private failed(err: unknown, frame: ClientFrame): void {
    const ref = frame.request_ref ?? refOf(frame);
    const log = this.hub.log.child({ frame: frame.type });
    const told = this.hub.outages.failure(err, log, 'chat frame failed', 'Something went wrong');
    if (told.code === 'UNAUTHORIZED') {
      this.error('UNAUTHORIZED', told.message, ref, false);
      this.close(CLOSE.unauthorized, 'Unauthorized');
      return;
    }
    // A refusal that says when to come back (Retry-After, in seconds, as over HTTP).
    const retryAfter = err instanceof AppError ? Number(err.headers['retry-after']) : Number.NaN;
    const retryAfterMs = Number.isFinite(retryAfter) ? retryAfter * 1000 : undefined;
    this.error(told.code as ErrorCode, told.message, ref, true, retryAfterMs);
  }

  /**
   * Follows an answer: replays its frames after the chunk numbered `afterIndex`, then the live
   * ones up to `message_done`. `doneOnly` delivers just the end (after a cancel).
   */
  private followOutcome(outcome: SendOutcome, afterIndex: number, doneOnly = false): void {
    if ('done' in outcome) {
      this.send(outcome.done);
      this.endFollowing(outcome.done.message.id);
      return;
    }
    const messageId = outcome.follow;
    if (this.following.has(messageId)) return;
    let skipping = afterIndex >= 0 || doneOnly;
    const onFrame = ({ frame }: Sequenced) => {
      if (skipping) {
        if (doneOnly && frame.type !== 'message_done') return;
        if (!doneOnly && !passed(frame, afterIndex)) return;
        skipping = false;
        if (frame.type === 'chunk' && frame.index === afterIndex) return;
      }
      this.send(frame);
      if (frame.type === 'message_done') this.endFollowing(messageId);
    };
    // Placeholder until the subscription is made: a close meanwhile stops it as soon as it is.
    let stop: (() => void) | undefined;
    this.following.set(messageId, () => stop?.());
    void this.hub.chat
      .follow(messageId, onFrame)
      .then((follow: Follow) => {
        if (!follow.found) {
          this.following.delete(messageId);
          this.error('NOT_FOUND', 'Message not found', messageId);
          return;
        }
        stop = follow.stop;
        if (this.closed || !this.following.has(messageId)) follow.stop();
      })
      .catch((err: unknown) => {
        this.following.delete(messageId);
        const told = this.hub.outages.failure(
          err,
          this.hub.log,
          'following an answer failed',
          'The answer cannot be followed right now',
        );
        this.error(told.code as ErrorCode, told.message, messageId);
      });
  }
}

/** Whether replay has reached the chunk numbered `afterIndex` (or anything after it). */
function passed(frame: AnswerFrame, afterIndex: number): boolean {
  if (frame.type === 'chunk') return frame.index >= afterIndex;
  return frame.type === 'message_done';
}

function refOf(frame: ClientFrame): string | undefined {
  if (frame.type === 'message_send') return frame.client_message_id;
  if (frame.type === 'message_cancel' || frame.type === 'message_resume') return frame.message_id;
  return undefined;
}
