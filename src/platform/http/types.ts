import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import { unauthorized } from '../../errors.js';
import type { RequestContext } from '../../modules/audit/service.js';
import type { AuthUser } from '../../modules/auth/service.js';

/** The Fastify instance with TypeBox types flowing from route schemas into handlers. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export const contextOf = (request: FastifyRequest): RequestContext => ({
  ip: request.ip,
  userAgent: request.headers['user-agent'] ?? null,
  requestId: request.id,
});

/** The caller of a route whose policy required a token (the guard has already run). */
export function callerOf(request: FastifyRequest): AuthUser {
  if (request.auth === null) throw unauthorized();
  return request.auth;
}
