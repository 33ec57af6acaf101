import type {
  FastifyInstance,
  onRequestHookHandler,
  preValidationHookHandler,
  RouteOptions,
} from 'fastify';
import { AppError, forbidden, unauthorized } from '../../errors.js';
import type { AuthUser } from '../../modules/auth/service.js';
import type { RateLimitRule } from '../rate-limit.js';
import { errorResponse } from './envelope.js';
import { MAX_FIELD_ERRORS } from './validation.js';

export type AuthLevel = 'none' | 'user' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route. Every API route must say. */
    auth?: AuthLevel;
    /** A per-IP limit for the route (spec section 8). */
    rateLimit?: RateLimitRule;
  }
  interface FastifyRequest {
    auth: AuthUser | null;
  }
}

export interface RegisteredRoute {
  method: string;
  url: string;
  auth: AuthLevel;
  rateLimited: boolean;
}

export interface RoutePolicyDeps {
  authenticate(token: string): Promise<AuthUser>;
  /** The hook enforcing a rule, or null when limits are switched off. */
  rateLimitHook(rule: RateLimitRule): onRequestHookHandler | null;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Stable names for client generators: `listConversations`, `getHealth`. */
const OPERATION_ID = /^[a-z][a-zA-Z0-9]{2,63}$/;
const BEARER = /^Bearer\s+(\S{1,4096})\s*$/i;

/**
 * Applies each route's declared policy: rate limit, then authentication and role, both before the
 * body is read; documents the error answers and bearer security; refuses bodies and query
 * parameters on routes that take none. Collects the routes so the authorization matrix test can
 * check every one.
 */
export function registerRoutePolicy(
  app: FastifyInstance,
  deps: RoutePolicyDeps,
): RegisteredRoute[] {
  const registry: RegisteredRoute[] = [];
  app.decorateRequest('auth', null);

  // Callback style: an async hook costs one more promise per request.
  const guard = (level: 'user' | 'admin'): onRequestHookHandler =>
    function authGuard(request, _reply, done) {
      const match = BEARER.exec(request.headers.authorization ?? '');
      if (match?.[1] === undefined) {
        done(unauthorized('Missing or malformed bearer token'));
        return;
      }
      deps.authenticate(match[1]).then((user) => {
        if (level === 'admin' && user.role !== 'admin') {
          done(forbidden());
          return;
        }
        request.auth = user;
        done();
      }, done);
    };

  app.addHook('onRoute', (route: RouteOptions) => {
    const auth = route.config?.auth;
    if (auth === undefined) {
      throw new Error(`route ${String(route.method)} ${route.url} declares no auth policy`);
    }
    const operationId = (route.schema as { operationId?: unknown } | undefined)?.operationId;
    if (typeof operationId !== 'string' || !OPERATION_ID.test(operationId)) {
      throw new Error(`route ${String(route.method)} ${route.url} needs a camelCase operationId`);
    }
    const rule = route.config?.rateLimit;
    const limiter = rule === undefined ? null : deps.rateLimitHook(rule);
    route.onRequest = [
      ...(limiter === null ? [] : [limiter]),
      ...(auth === 'none' ? [] : [guard(auth)]),
      ...toArray(route.onRequest),
    ];
    const methods = toArray(route.method).map(String);
    if (route.schema?.body === undefined && methods.some((m) => BODY_METHODS.has(m))) {
      route.preValidation = [rejectBody, ...toArray(route.preValidation)];
    }
    if (route.schema?.querystring === undefined) {
      route.preValidation = [rejectQuery, ...toArray(route.preValidation)];
    } else {
      route.schema.querystring = optionalDefaults(route.schema.querystring);
    }
    documentErrors(route, auth, rule !== undefined, methods);
    for (const method of methods) {
      registry.push({ method, url: route.url, auth, rateLimited: rule !== undefined });
    }
  });
  return registry;
}

function toArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

const rejectBody: preValidationHookHandler = (request, _reply, done) => {
  const body = request.body;
  const empty =
    body === undefined ||
    body === null ||
    (typeof body === 'object' && Object.keys(body).length === 0);
  done(
    empty
      ? undefined
      : new AppError('VALIDATION_ERROR', 'Request validation failed', [
          { field: 'body', message: 'this endpoint takes no request body' },
        ]),
  );
};

/** Unknown query parameters are refused like unknown body fields, also where a route takes none. */
const rejectQuery: preValidationHookHandler = (request, _reply, done) => {
  const names = Object.keys(request.query ?? {});
  done(
    names.length === 0
      ? undefined
      : new AppError(
          'VALIDATION_ERROR',
          'Request validation failed',
          names
            .slice(0, MAX_FIELD_ERRORS)
            .map((name) => ({ field: `query.${name}`, message: 'is not an allowed field' })),
        ),
  );
};

/**
 * A query parameter the server defaults is optional to the client: Ajv fills the default in before
 * it checks `required`, so validation is unchanged, and the document no longer says `required`.
 */
function optionalDefaults(schema: unknown): unknown {
  const object = schema as {
    properties?: Record<string, { default?: unknown }>;
    required?: string[];
  };
  if (object.required === undefined || object.properties === undefined) return schema;
  const properties = object.properties;
  const required = object.required.filter((name) => properties[name]?.default === undefined);
  return required.length === object.required.length ? schema : { ...object, required };
}

/**
 * Every answer the policy and the layers below the route can give, in the route's document: the
 * route itself documents only its own outcomes.
 */
function documentErrors(
  route: RouteOptions,
  auth: AuthLevel,
  limited: boolean,
  methods: string[],
): void {
  const schema = (route.schema ??= {}) as Record<string, unknown>;
  const response = (schema.response ??= {}) as Record<string, unknown>;
  const add = (status: number, description: string) => {
    response[status] ??= errorResponse(description);
  };
  if (auth !== 'none') add(401, 'Missing, invalid, expired or revoked token');
  // OpenAPI 3.1 lets a bearer requirement name the roles it needs: administrators' routes say so.
  schema.security = auth === 'none' ? [] : [{ bearerAuth: auth === 'admin' ? ['admin'] : [] }];
  if (auth === 'admin') add(403, 'Caller is not an administrator');
  if (methods.some((m) => BODY_METHODS.has(m))) {
    add(413, 'Request body over its limit (JSON: 1 MiB)');
    add(415, 'Request body of a type the operation does not take (JSON: application/json)');
  }
  add(422, 'Request validation failed: body, query, path or a malformed request');
  if (limited) add(429, 'Rate limit exceeded');
  add(500, 'Internal error');
  add(503, 'The instance is shutting down, or a dependency it needs is unavailable');
}
