import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

const REDOC_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Medical Assistant Service - ReDoc</title>
  </head>
  <body>
    <redoc spec-url="/openapi.json"></redoc>
    <script src="/redoc/redoc.standalone.js"></script>
  </body>
</html>`;

/** The groups operations are listed under, in this order; each module tags its routes. */
export const API_TAGS = [
  { name: 'auth', description: 'Registration, login, token refresh and logout' },
  { name: 'users', description: 'Own profile and password; user administration' },
  { name: 'conversations', description: 'Conversations, branches and their message threads' },
  {
    name: 'knowledge base',
    description: 'Documents, their versions and indexing jobs, and search (administrators)',
  },
  { name: 'voice', description: 'Voice sessions and spoken turns' },
  {
    name: 'feedback',
    description: 'Ratings of sessions; their summary and export (administrators)',
  },
  {
    name: 'admin-panel',
    description: 'Dashboard, users with statistics, live sockets, system metrics (administrators)',
  },
  { name: 'audit', description: 'The hash-chained audit log: entries, verification, CSV export' },
  { name: 'cache', description: 'The two-layer cache: statistics, clear, invalidate' },
  { name: 'feature-flags', description: 'Feature flags and their rollout; the caller’s own flags' },
  { name: 'health', description: 'Liveness, readiness and Prometheus metrics' },
];

type Operation = Record<string, unknown> & {
  operationId?: string | undefined;
  responses?: Record<string, { description?: string }>;
};
interface Document {
  paths?: Record<string, Record<string, Operation>>;
}

/**
 * HEAD operations documented as what they are: their GET, same parameters, security and statuses,
 * with no response content, under their declared camelCase operationId (the plugin snapshots HEAD
 * routes before the route policy completes them, and appends `-head` to the id).
 */
function documentHeads(document: Document): void {
  for (const operations of Object.values(document.paths ?? {})) {
    const get = operations.get;
    const head = operations.head;
    if (get === undefined || head === undefined) continue;
    const responses = Object.fromEntries(
      Object.entries(get.responses ?? {}).map(([status, r]) => [
        status,
        { description: r.description ?? 'As GET' },
      ]),
    );
    operations.head = {
      ...get,
      operationId: head.operationId?.replace(/-head$/, ''),
      summary: head.summary,
      responses,
    };
  }
}

/** What a served document says about itself. */
export interface DocsInfo {
  title: string;
  description: string;
  tags: { name: string; description: string }[];
}

/** The main API's document. */
export const API_DOCS: DocsInfo = {
  title: 'Medical Assistant Service API',
  description:
    'Accounts, conversations, grounded chat, voice, knowledge base and administration. ' +
    'Every JSON answer under /api and /conversations is the envelope ' +
    '{ success, data, error, meta }.',
  tags: API_TAGS,
};

/**
 * OpenAPI at /openapi.json, Swagger UI at /docs, ReDoc at /redoc. Every asset is served from npm
 * packages installed with the service; nothing is fetched from a CDN. Registered before the route
 * policy, so these routes are public.
 */
export async function registerDocs(
  app: FastifyInstance,
  version: string,
  info: DocsInfo,
): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: info.title,
        version,
        description: info.description,
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      // Relative: the instance that serves this document, whatever address it was reached at.
      servers: [{ url: '/', description: 'The instance serving this document' }],
      tags: info.tags,
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
    // Shared schemas keep their $id as their name: `#/components/schemas/ErrorEnvelope`.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${String(i)}`,
    },
    // Only routes declared for HEAD exist (Fastify's automatic HEAD routes are off).
    exposeHeadRoutes: true,
    transformObject: (object) => {
      if (!('openapiObject' in object)) return object.swaggerObject;
      documentHeads(object.openapiObject as Document);
      return object.openapiObject;
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });

  const redocBundle = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
  let bundle: Buffer | undefined;
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
  app.get('/redoc', { schema: { hide: true } }, (_req, reply) =>
    reply.type('text/html; charset=utf-8').send(REDOC_PAGE),
  );
  app.get('/redoc/redoc.standalone.js', { schema: { hide: true } }, async (_req, reply) => {
    bundle ??= await readFile(redocBundle);
    return reply
      .type('application/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=86400')
      .send(bundle);
  });
}
