import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { AppError, type ErrorCode } from '../../errors.js';
import type { Outages } from '../outages.js';
import { errorBody } from './envelope.js';
import { sendAfterBody } from './drain.js';
import { fieldErrors } from './validation.js';

/** Every failure, thrown anywhere, leaves as one envelope with one of the documented codes. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as Partial<FastifyError>;
  if (e.validation !== undefined) {
    return new AppError(
      'VALIDATION_ERROR',
      'Request validation failed',
      fieldErrors(e.validation as never, e.validationContext ?? 'body'),
    );
  }
  switch (e.statusCode) {
    case 400:
      // Malformed JSON, empty JSON body, bad content length: the request could not be read.
      return new AppError('VALIDATION_ERROR', 'Malformed request body', [
        { field: 'body', message: e.message ?? 'could not be parsed' },
      ]);
    case 404:
      return new AppError('NOT_FOUND', 'Not found');
    case 413:
      return new AppError('PAYLOAD_TOO_LARGE', 'Request body is too large');
    case 415:
      return new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        'Unsupported content type; send application/json',
      );
    default:
      return otherStatus(e.statusCode);
  }
}

/** The codes of DECISIONS 1 that other client statuses of the framework and plugins map to. */
const CLIENT_CODES: Partial<Record<number, ErrorCode>> = {
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  409: 'CONFLICT',
  429: 'RATE_LIMITED',
};

/**
 * A status the framework or a plugin chose for a request: a client error keeps its status (a 406
 * or 408 is the client's to fix, not the server's fault) with its standard reason as the message,
 * since the framework's own text may quote the request; anything else is an internal error.
 */
function otherStatus(status: number | undefined): AppError {
  if (status === undefined || status < 400 || status > 499) {
    return status === 503
      ? new AppError('SERVICE_UNAVAILABLE', 'Service unavailable')
      : new AppError('INTERNAL_ERROR', 'Internal server error');
  }
  const code = CLIENT_CODES[status];
  const reason = STATUS_CODES[status] ?? 'Request refused';
  return code === undefined
    ? new AppError('VALIDATION_ERROR', reason, null, {}, status)
    : new AppError(code, reason);
}

export function registerErrorHandling(app: FastifyInstance, outages: Outages): void {
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    // A lost dependency: 503 with Retry-After, counted and logged once per outage, not per request.
    const refused = outages.refusal(err);
    const appErr = refused ?? toAppError(err);
    if (refused === undefined && appErr.status >= 500) {
      // Logged with the request id; the client sees only the code and a generic message.
      request.log.error({ err, reqId: request.id }, 'request failed');
    }
    // RFC 6750: a 401 names the scheme the client should use.
    if (appErr.status === 401) void reply.header('www-authenticate', 'Bearer');
    void reply.code(appErr.status).headers(appErr.headers);
    // A body still arriving is read to its end first when small, else the connection closes.
    return sendAfterBody(err, request, reply, () => reply.send(errorBody(request, appErr)));
  });

  app.setNotFoundHandler((request, reply) => {
    // The path is echoed to help a client spot a typo, cut short: it is whatever the client sent.
    const path = request.url.split('?')[0] ?? '';
    const shown = path.length > 100 ? `${path.slice(0, 100)}…` : path;
    const err = new AppError('NOT_FOUND', `No route ${request.method} ${shown}`);
    return reply.code(404).send(errorBody(request, err));
  });
}
