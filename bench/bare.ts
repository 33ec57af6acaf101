import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';

/**
 * The baseline of bench/http.ts: a bare Fastify app (no logger, hooks, limiter, auth, database or
 * metrics) answering the same JSON as the service's GET /health and GET /api/auth/me, with the
 * same response schemas, so the difference measured is what the service adds. Run as a process
 * of its own: `PORT=<port> npx tsx bench/bare.ts`.
 */

const str = { type: 'string' } as const;
const Liveness = {
  type: 'object',
  properties: { status: str, version: str, timestamp: { type: 'number' } },
} as const;
const User = {
  type: 'object',
  properties: {
    id: str,
    email: str,
    full_name: str,
    is_active: { type: 'boolean' },
    is_admin: { type: 'boolean' },
    admin_role: str,
    created_at: str,
    updated_at: str,
    last_login: { type: ['string', 'null'] },
  },
} as const;
const UserEnvelope = {
  type: 'object',
  properties: {
    success: { type: 'boolean' },
    data: User,
    error: { type: 'null' },
    meta: { type: 'object', properties: { request_id: str, timestamp: str } },
  },
} as const;

/** A fixed user of the same shape and similar field lengths as the one the benchmark registers. */
const user = {
  id: '0b6f3c2e-6a0e-4f53-9d43-2f0c1c7e9a11',
  email: 'bench-0123456789ab@example.org',
  full_name: 'Benchmark User',
  is_active: true,
  is_admin: false,
  admin_role: 'user',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  last_login: '2026-01-01T00:00:00.000Z',
};

const app = Fastify({ logger: false });

app.get('/health', { schema: { response: { 200: Liveness } } }, () => ({
  status: 'ok',
  version: '2.0.0',
  timestamp: Date.now() / 1000,
}));

app.get('/api/auth/me', { schema: { response: { 200: UserEnvelope } } }, () => ({
  success: true,
  data: user,
  error: null,
  meta: { request_id: randomUUID(), timestamp: new Date().toISOString() },
}));

const port = Number(process.env.PORT ?? '8100');
await app.listen({ host: '127.0.0.1', port });
process.stdout.write(`bare listening on ${port}\n`);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0));
  });
}
