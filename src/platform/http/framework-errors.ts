import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { errorBody, errorEnvelope } from './envelope.js';

/**
 * Errors Fastify raises before a request reaches a route (the router's URL decoding and parameter
 * length checks) as the envelope with X-Request-ID, like every other error (DECISIONS 1). Fastify
 * answers these with its own JSON, echoing the whole URL, unless `frameworkErrors` is set.
 */
export function frameworkErrors(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const err =
    error.code === 'FST_ERR_BAD_URL'
      ? new AppError('VALIDATION_ERROR', 'Request validation failed', [
          { field: 'path', message: 'is not valid percent-encoded UTF-8' },
        ])
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new AppError('VALIDATION_ERROR', 'Request validation failed', [
            { field: 'path', message: 'has a path segment that is too long' },
          ])
        : new AppError('INTERNAL_ERROR', 'Internal server error');
  if (err.status >= 500) request.log.error({ code: error.code }, 'router failed');
  void reply
    .code(err.status)
    .header('x-request-id', request.id)
    .type('application/json; charset=utf-8')
    .send(errorBody(request, err));
}

/** What the HTTP parser refused, as the status it calls for and the envelope's code. */
function clientRefusal(code: string | undefined): { status: number; err: AppError } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      err: new AppError('PAYLOAD_TOO_LARGE', 'The request line and headers are too large'),
    };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return {
      status: 408,
      err: new AppError('VALIDATION_ERROR', 'The request did not arrive in time'),
    };
  }
  return { status: 400, err: new AppError('VALIDATION_ERROR', 'Malformed HTTP request') };
}

/**
 * Requests Node's HTTP parser refuses (malformed request line or headers, headers over the size
 * limit, a request that never finished arriving) never become Fastify requests: they are answered
 * here, on the raw socket, with the envelope and a fresh X-Request-ID, and the connection closes.
 * They keep the HTTP status the failure calls for (400, 408, 431).
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const { status, err } = clientRefusal(error.code);
    const requestId = randomUUID();
    const body = JSON.stringify(errorEnvelope(requestId, err));
    socket.write(
      `HTTP/1.1 ${String(status)} ${STATUS_CODES[status] ?? ''}\r\n` +
        `content-type: application/json; charset=utf-8\r\n` +
        `content-length: ${String(Buffer.byteLength(body))}\r\n` +
        `x-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
