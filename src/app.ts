import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Deps } from './deps.js';
import { serviceUnavailable } from './errors.js';
import { authRoutes } from './modules/auth/routes.js';
import { healthRoutes } from './modules/health/routes.js';
import { usersRoutes } from './modules/users/routes.js';
import { configureBodies } from './platform/http/body.js';
import { registerDocs } from './platform/http/docs.js';
import { registerErrorHandling } from './platform/http/error-handler.js';
import { lazyChildLoggerFactory } from './platform/http/request-logger.js';
import { registerRoutePolicy, type RegisteredRoute } from './platform/http/route-policy.js';
import type { App } from './platform/http/types.js';
import { createValidatorCompiler } from './platform/http/validation.js';

export const JSON_BODY_LIMIT = 1024 * 1024;
const PROBES = new Set(['/health', '/ready', '/metrics']);
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * TRUST_PROXY as Fastify takes it: true trusts every hop (X-Forwarded-For is then client-chosen);
 * a hop count trusts that many proxies in front of the service; a list trusts those addresses.
 */
function trustProxyOption(value: boolean | number | string) {
  if (typeof value === 'number') return (_address: string, hop: number) => hop < value;
  return typeof value === 'string' ? value.split(',') : value;
}

export interface BuiltApp {
  app: App;
  /** Every API route with its auth policy, for the authorization matrix. */
  routes: RegisteredRoute[];
}

/**
 * The HTTP application: plugins, the route policy, the one error handler, every module. Not yet
 * ready: the caller listens (or calls `ready()`).
 */
export async function buildApp(deps: Deps): Promise<BuiltApp> {
  const { config, metrics } = deps;
  const fastify: FastifyInstance = Fastify({
    loggerInstance: deps.log,
    // Fastify's two lines per request are replaced by the one access line written in onResponse.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLoggerFactory,
    bodyLimit: JSON_BODY_LIMIT,
    trustProxy: trustProxyOption(config.trustProxy),
    exposeHeadRoutes: false,
    // Requests arriving while closing get the 503 envelope from the hook below, not Fastify's own.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    genReqId: (req) => {
      const header = req.headers['x-request-id'];
      return typeof header === 'string' && SANE_REQUEST_ID.test(header) ? header : randomUUID();
    },
  });
  configureBodies(fastify);
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(createValidatorCompiler());
  registerErrorHandling(app);

  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
    if (closing) {
      void reply.header('connection', 'close');
      throw serviceUnavailable('The service is shutting down; retry on another instance');
    }
  });
  // The access line holds only the request id, method, route template, status and duration, none
  // of which the redaction paths cover: its own logger skips redaction, which cost about 10 µs per
  // line (each key runs through the wildcard paths).
  const accessLog = deps.log.child({}, { redact: [] });
  // Synchronous (callback style): no promise per request for work that never waits.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const elapsed = reply.elapsedTime;
    metrics.httpRequests.inc({ method: request.method, route, status: reply.statusCode });
    metrics.httpDuration.observe({ method: request.method, route }, elapsed / 1000);
    // Probes answer every few seconds per orchestrator: their lines are debug, the rest info.
    const level = PROBES.has(route) ? 'debug' : 'info';
    accessLog[level](
      {
        reqId: request.id,
        method: request.method,
        route,
        status: reply.statusCode,
        ms: Math.round(elapsed),
      },
      'request completed',
    );
    done();
  });

  await registerDocs(app, deps.health.version);
  const routes = registerRoutePolicy(app, {
    authenticate: (token) => deps.auth.authenticate(token),
    rateLimitHook: (rule) =>
      config.rateLimit.enabled
        ? deps.rateLimiter.onRequest(rule, (r) => {
            metrics.rateLimited.inc({ limit: r.name });
          })
        : null,
  });

  healthRoutes(app, { health: deps.health, metrics, limits: config.rateLimit });
  authRoutes(app, { auth: deps.auth, users: deps.users, limits: config.rateLimit });
  usersRoutes(app, { users: deps.users });

  return { app, routes };
}
