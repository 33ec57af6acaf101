import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';

/**
 * How much of a refused request body is read and thrown away so that the answer goes out on a
 * connection that stays usable. Twice the JSON body limit: a JSON body a little over its limit is
 * still small enough.
 */
export interface DrainLimits {
  /** Bytes still to come (Content-Length) or read while draining; beyond this the connection closes. */
  maxBytes: number;
  /** The longest wait for the rest of the body; a slower sender gets the answer and a closed connection. */
  maxMs: number;
}

export const DRAIN_LIMITS: DrainLimits = { maxBytes: 2 * 1024 * 1024, maxMs: 2000 };

/**
 * After an answer that closes its connection while the body is still arriving, how long and how
 * much more is read and thrown away before the socket is destroyed ("lingering close"). Closing a
 * socket with unread bytes makes the kernel send a reset, and a reset can reach the client before
 * it has read the answer: it then sees only EPIPE or ECONNRESET. So the server half-closes after
 * the answer and discards what is still in flight until the client closes its side (clients stop
 * sending once they read the answer) or one of these runs out.
 */
export const LINGER_LIMITS: DrainLimits = { maxBytes: 8 * 1024 * 1024, maxMs: 2000 };

/**
 * Sends an error answer (`send`) while the request body may still be arriving, without losing the
 * answer and without letting the body hold the server.
 *
 * An answer sent with unread bytes still on the wire is lost by many keep-alive clients: if the
 * connection closes under them they fail writing the body (EPIPE) before they read the answer; if
 * it stays open, Node leaves a body a parser has stopped consuming unread and the connection
 * stalls. So:
 * - nothing left to read: the answer goes now (and the connection stays open unless the answer
 *   already says otherwise, as while shutting down);
 * - a small rest (at most `maxBytes`, arriving within `maxMs`): it is read and discarded first,
 *   then the answer goes on a connection that stays open;
 * - a larger rest (Content-Length says so up front; a body without one once `maxBytes` more have
 *   been read), a slower one, or an error that carries `connection: close` itself (the upload over
 *   its limit, where the server stops reading): the answer goes at once with `connection: close`
 *   and nothing more is read.
 *
 * Returns a promise only when it waits for the rest of the body.
 */
export function sendAfterBody(
  err: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  send: () => unknown,
  limits: DrainLimits = DRAIN_LIMITS,
): Promise<void> | undefined {
  const req = request.raw;
  // Fastify puts `connection: close` on every body-parser error, whatever is left of the body;
  // what follows decides that better. (Without the header, an HTTP/1.1 connection stays open.)
  if (isBodyParserError(err) && reply.getHeader('connection') === 'close') {
    reply.removeHeader('connection');
  }
  const rest = unreadRest(req);
  if (rest === 0) {
    send();
    return undefined;
  }
  if (closesItself(err) || (rest !== null && rest > limits.maxBytes)) {
    lingerAfterAnswer(req);
    void reply.header('connection', 'close');
    send();
    return undefined;
  }
  return discardRest(req, limits).then((complete) => {
    if (!complete) {
      lingerAfterAnswer(req);
      void reply.header('connection', 'close');
    }
    send();
  });
}

/**
 * An upper bound on the body bytes still to arrive: 0 when the whole message has arrived (what is
 * buffered is discarded here), Content-Length when declared (never less than what is left), null
 * when unknown (a chunked body).
 */
function unreadRest(req: IncomingMessage): number | null {
  if (req.readableEnded || req.destroyed) return 0;
  if (req.complete) {
    req.unpipe();
    req.resume();
    return 0;
  }
  const declared = req.headers['content-length'];
  const length = declared === undefined ? Number.NaN : Number(declared);
  return Number.isSafeInteger(length) ? length : null;
}

/**
 * Reads and discards the rest of the body. True once it has all arrived; false when it was more
 * than `maxBytes`, slower than `maxMs`, or the client went away (reading then stops).
 */
function discardRest(req: IncomingMessage, limits: DrainLimits): Promise<boolean> {
  return new Promise((resolve) => {
    let bytes = 0;
    let settled = false;
    const settle = (complete: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      if (!complete) req.pause();
      resolve(complete);
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limits.maxBytes) settle(false);
    };
    const onEnd = () => {
      settle(true);
    };
    const onClose = () => {
      settle(false);
    };
    const timer = setTimeout(onClose, limits.maxMs);
    timer.unref();
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
    // Whatever parser was reading (a multipart parser left piped) gets no more of it.
    req.unpipe();
    req.resume();
  });
}

/**
 * Stops whatever parser was reading the body and makes the close that follows the answer a
 * lingering one (LINGER_LIMITS): Node's server ends a `connection: close` exchange with
 * `socket.destroySoon()`, which destroys the socket as soon as the answer is flushed; here it
 * half-closes instead, keeps discarding the body, and destroys the socket once the client has
 * closed its side or the linger budget is spent.
 */
function lingerAfterAnswer(req: IncomingMessage, limits: DrainLimits = LINGER_LIMITS): void {
  const socket = req.socket;
  req.unpipe();
  let bytes = 0;
  const onData = (chunk: Buffer) => {
    bytes += chunk.length;
    // Through the request: under app.inject the socket is a stand-in without destroy().
    if (bytes > limits.maxBytes) req.destroy();
  };
  req.on('data', onData);
  req.resume();
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), limits.maxMs);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
    });
    // The client closed its side: nothing more can arrive, and it has the answer.
    socket.once('end', () => socket.destroy());
  };
}

function isBodyParserError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('FST_ERR_CTP_');
}

function closesItself(err: unknown): boolean {
  return err instanceof AppError && err.headers.connection === 'close';
}
