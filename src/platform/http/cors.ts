import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/** Headers a browser app may read from answers: request ids and the rate-limit state. */
const EXPOSED = [
  'X-Request-ID',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
];

/**
 * Cross-origin access for the configured origins (`CORS_ORIGINS`), with preflight. Nothing is
 * registered without origins: browsers then let only same-origin pages read answers, and OPTIONS
 * is an unknown route like any other. A request from an origin not on the list gets no CORS
 * headers and its preflight is not answered (404), so the browser refuses it. Tokens travel in the
 * Authorization header, never in cookies: credentials stay off. Registered before the route
 * policy, so the plugin's OPTIONS route needs no auth declaration; its hook runs before every
 * route's own, so a preflight never meets authentication and a refusal still carries the headers.
 */
export async function registerCors(app: FastifyInstance, origins: string[]): Promise<void> {
  if (origins.length === 0) return;
  const any = origins.includes('*');
  const allowed = new Set(origins);
  await app.register(cors, {
    origin: (origin, callback) => {
      const ok = origin !== undefined && (any || allowed.has(origin.toLowerCase()));
      callback(null, ok ? (any ? '*' : origin) : false);
    },
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-ID'],
    exposedHeaders: EXPOSED,
    maxAge: 600,
    credentials: false,
  });
}
