import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Deps } from './deps.js';
import { auditRoutes } from './modules/audit/routes.js';
import { cacheRoutes } from './modules/admin/cache-routes.js';
import { adminPanelUserRoutes } from './modules/admin/users-routes.js';
import { statusRoutes } from './modules/admin/status-routes.js';
import { authRoutes } from './modules/auth/routes.js';
import { conversationsRoutes } from './modules/conversations/routes.js';
import { feedbackRoutes } from './modules/feedback/routes.js';
import { flagsRoutes } from './modules/flags/routes.js';
import { voiceRoutes } from './modules/voice/routes.js';
import { healthRoutes } from './modules/health/routes.js';
import { knowledgeRoutes } from './modules/knowledge/routes.js';
import { usersRoutes } from './modules/users/routes.js';
import { configureBodies } from './platform/http/body.js';
import { API_DOCS, registerDocs, type DocsInfo } from './platform/http/docs.js';
import { registerCors } from './platform/http/cors.js';
import { ErrorEnvelope } from './platform/http/envelope.js';
import { registerErrorHandling } from './platform/http/error-handler.js';
import { clientErrorHandler, frameworkErrors } from './platform/http/framework-errors.js';
import { registerRequestHooks } from './platform/http/request-hooks.js';
import { lazyChildLoggerFactory } from './platform/http/request-logger.js';
import { registerRoutePolicy, type RegisteredRoute } from './platform/http/route-policy.js';
import type { App } from './platform/http/types.js';
import { createValidatorCompiler } from './platform/http/validation.js';

export const JSON_BODY_LIMIT = 1024 * 1024;
/**
 * Path parameters are judged by their route's schema (a 10,000-character id is a 422 naming the
 * parameter), not cut off by the router; Node's 16 KiB limit on the request head still bounds them.
 */
const MAX_PARAM_LENGTH = 16 * 1024;
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

export interface BaseAppOptions {
  docs: DocsInfo;
  /** Cross-origin requests from browsers (the API's clients; operators' tools need none). */
  cors: boolean;
}

/**
 * A Fastify application with the service's plumbing and no routes: request ids, body parsing,
 * validation, the one error handler, access logs and metrics, documentation, and the route policy
 * (authentication, roles, rate limits). The API and the operator server are both built on it.
 */
export async function baseApp(deps: Deps, options: BaseAppOptions): Promise<BuiltApp> {
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
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    clientErrorHandler,
    genReqId: (req) => {
      const header = req.headers['x-request-id'];
      return typeof header === 'string' && SANE_REQUEST_ID.test(header) ? header : randomUUID();
    },
  });
  configureBodies(fastify);
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(createValidatorCompiler());
  app.addSchema(ErrorEnvelope);
  registerErrorHandling(app, deps.outages);

  registerRequestHooks(app, deps.log, metrics);

  await registerDocs(app, deps.health.version, options.docs);
  if (options.cors) await registerCors(app, config.corsOrigins);
  const routes = registerRoutePolicy(app, {
    authenticate: (token) => deps.auth.authenticate(token),
    rateLimitHook: (rule) =>
      config.rateLimit.enabled
        ? deps.rateLimiter.onRequest(rule, (r) => {
            metrics.rateLimited.inc({ limit: r.name });
          })
        : null,
  });
  return { app, routes };
}

/**
 * The HTTP application: plugins, the route policy, the one error handler, every module. Not yet
 * ready: the caller listens (or calls `ready()`).
 */
export async function buildApp(deps: Deps): Promise<BuiltApp> {
  const { config, metrics } = deps;
  const { app, routes } = await baseApp(deps, { docs: API_DOCS, cors: true });

  healthRoutes(app, { health: deps.health, metrics, limits: config.rateLimit });
  authRoutes(app, { auth: deps.auth, users: deps.users, limits: config.rateLimit });
  usersRoutes(app, { users: deps.users });
  adminPanelUserRoutes(app, { db: deps.database.db, users: deps.users, health: deps.health });
  cacheRoutes(app, { cacheAdmin: deps.cacheAdmin });
  auditRoutes(app, { audit: deps.audit });
  statusRoutes(app, { status: deps.status });
  conversationsRoutes(app, { conversations: deps.conversations, messages: deps.messages });
  const { knowledge, search } = deps.knowledge;
  await knowledgeRoutes(app, { knowledge, search, files: deps.files });
  await voiceRoutes(app, deps.voice.deps);
  flagsRoutes(app, { flags: deps.flags });
  feedbackRoutes(app, {
    feedback: deps.feedback,
    rateLimiter: config.rateLimit.enabled ? deps.rateLimiter : null,
    onLimited: (rule) => {
      metrics.rateLimited.inc({ limit: rule.name });
    },
  });

  // Sockets are not requests: the server would wait for them to end. They are told to go (1001)
  // before it closes; the answers they asked for run on (see Chat.close).
  app.addHook('preClose', async () => {
    await Promise.all([deps.chat.hub.close(), deps.voice.hub.close()]);
  });
  // The chat and voice sockets take their upgrades before Fastify sees them; any other upgrade is
  // refused.
  app.server.on('upgrade', (req, socket, head) => {
    if (!deps.chat.upgrade(req, socket, head) && !deps.voice.upgrade(req, socket, head)) {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    }
  });

  return { app, routes };
}
