import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs, featureFlags, kbDocuments, kbIndexingJobs } from '../src/db/schema/index.js';
import { messagesRepo } from '../src/modules/conversations/messages-repo.js';
import { conversationsRepo } from '../src/modules/conversations/repo.js';
import { jobsRepo } from '../src/modules/knowledge/jobs-repo.js';
import { documentsRepo } from '../src/modules/knowledge/repo.js';
import { flagsRepo } from '../src/modules/flags/repo.js';
import { usersRepo } from '../src/modules/users/repo.js';
import type { AuthLevel, RegisteredRoute } from '../src/platform/http/route-policy.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import {
  PASSWORD,
  bearer,
  createUser,
  dataOf,
  errorOf,
  uniqueEmail,
  type TestUser,
} from './helpers/factories.js';
import { recordUpload } from './helpers/knowledge.js';

/**
 * The authorization matrix: every route the app registers, a sample request for it, and the status
 * each kind of caller gets. A route registered without an entry here, or an entry for a route that
 * is gone, fails the suite.
 */

/** Callers. "deactivated*" signed in, then an administrator deactivated them: the token is unexpired. */
const CALLERS = ['anonymous', 'user', 'admin', 'deactivated', 'deactivatedAdmin'] as const;
type Caller = (typeof CALLERS)[number];
type Expected = [
  anonymous: number,
  user: number,
  admin: number,
  deactivated: number,
  deactivatedAdmin: number,
];

interface Sample {
  url: string;
  /** A JSON body, or raw bytes sent with `contentType`. */
  payload?: Record<string, unknown> | Buffer;
  contentType?: string;
}

/** A conversation made for a case, with one message to fork from. */
interface Owned {
  ownerId: string;
  conversationId: string;
  messageId: string;
}

/** A knowledge-base document made for a case: its doc_key, and its latest job, which failed. */
interface KbDocument {
  id: string;
  docKey: string;
  jobId: string;
}

interface Entry {
  /** The state of the fresh user each case acts on (default: an active ordinary user). */
  subject?: 'user' | 'inactive' | 'admin';
  /**
   * The route acts on a conversation of the caller's own: one is made for each case, owned by the
   * caller (by the subject for the anonymous caller, whose request is refused before any lookup).
   */
  owned?: true;
  /** The route acts on a knowledge-base document: one is made for each case. */
  kb?: true;
  /** The route acts on a feature flag: one named `flagNameOf(subject)` is made for each case. */
  flag?: true;
  /** A request the route accepts from an authorized caller. */
  sample(
    subject: TestUser,
    caller: TestUser | null,
    owned: Owned | null,
    kb: KbDocument | null,
  ): Sample;
  expect: Expected;
}

/** The case's conversation, for the samples of entries with `owned`. */
function ownedOf(owned: Owned | null): Owned {
  if (owned === null) throw new Error('the entry needs `owned: true`');
  return owned;
}
const conversationUrl = (owned: Owned | null, rest = '') =>
  `/conversations/${ownedOf(owned).conversationId}${rest}`;

/** The case's document, for the samples of entries with `kb`. */
function kbOf(kb: KbDocument | null): KbDocument {
  if (kb === null) throw new Error('the entry needs `kb: true`');
  return kb;
}

const BOUNDARY = 'authz-matrix-5e0b1d';

/** A multipart/form-data upload of a small text file with a unique title and content. */
function uploadSample(): Sample {
  const tag = randomBytes(4).toString('hex');
  const part = (name: string, value: string, file = '') =>
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"${file}\r\n` +
    `${file === '' ? '' : 'Content-Type: text/plain\r\n'}\r\n${value}\r\n`;
  const body =
    part('title', `Matrix upload ${tag}`) +
    part('category', 'cardiology') +
    part('file', `Beta blockers after myocardial infarction (${tag}).\n`, '; filename="a.txt"') +
    `--${BOUNDARY}--\r\n`;
  return {
    url: '/api/admin/kb/documents',
    payload: Buffer.from(body),
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  };
}

const NEW_PASSWORD = 'a different passphrase 42';

/** The feature flag made for a case of an entry with `flag`. */
const flagNameOf = (subject: TestUser) => `matrix.${subject.id}`;
const flagUrl = (subject: TestUser, rest = '') =>
  `/api/admin/feature-flags/${flagNameOf(subject)}${rest}`;

// expect: [anonymous, user, admin, deactivated user, deactivated admin]
const MATRIX: Record<string, Entry> = {
  'GET /health': { sample: () => ({ url: '/health' }), expect: [200, 200, 200, 200, 200] },
  'GET /ready': { sample: () => ({ url: '/ready' }), expect: [200, 200, 200, 200, 200] },
  'HEAD /health': { sample: () => ({ url: '/health' }), expect: [200, 200, 200, 200, 200] },
  'HEAD /ready': { sample: () => ({ url: '/ready' }), expect: [200, 200, 200, 200, 200] },
  'GET /metrics': { sample: () => ({ url: '/metrics' }), expect: [200, 200, 200, 200, 200] },
  'POST /api/auth/register': {
    sample: () => ({
      url: '/api/auth/register',
      payload: { email: uniqueEmail('matrix'), password: PASSWORD, full_name: 'Matrix Case' },
    }),
    expect: [201, 201, 201, 201, 201],
  },
  'POST /api/auth/login': {
    sample: (s) => ({ url: '/api/auth/login', payload: { email: s.email, password: s.password } }),
    expect: [200, 200, 200, 200, 200],
  },
  'POST /api/auth/refresh': {
    sample: (s) => ({ url: '/api/auth/refresh', payload: { refresh_token: s.refresh } }),
    expect: [200, 200, 200, 200, 200],
  },
  'POST /api/auth/logout': {
    sample: () => ({ url: '/api/auth/logout' }),
    expect: [401, 200, 200, 401, 401],
  },
  'GET /api/auth/me': {
    sample: () => ({ url: '/api/auth/me' }),
    expect: [401, 200, 200, 401, 401],
  },
  'GET /api/users/me': {
    sample: () => ({ url: '/api/users/me' }),
    expect: [401, 200, 200, 401, 401],
  },
  'PUT /api/users/me': {
    sample: () => ({ url: '/api/users/me', payload: { full_name: 'Renamed Self' } }),
    expect: [401, 200, 200, 401, 401],
  },
  'POST /api/users/me/change-password': {
    sample: (_s, c) => ({
      url: '/api/users/me/change-password',
      payload: { old_password: c?.password ?? PASSWORD, new_password: NEW_PASSWORD },
    }),
    expect: [401, 200, 200, 401, 401],
  },
  // An administrator cannot delete their own account (DECISIONS 2): 409.
  'DELETE /api/users/me': {
    sample: () => ({ url: '/api/users/me' }),
    expect: [401, 200, 409, 401, 401],
  },
  'GET /api/users': {
    sample: () => ({ url: '/api/users?offset=0&limit=5' }),
    expect: [401, 403, 200, 401, 401],
  },
  'GET /api/users/:user_id': {
    sample: (s) => ({ url: `/api/users/${s.id}` }),
    expect: [401, 403, 200, 401, 401],
  },
  'PATCH /api/users/:user_id': {
    sample: (s) => ({ url: `/api/users/${s.id}`, payload: { full_name: 'Renamed By Admin' } }),
    expect: [401, 403, 200, 401, 401],
  },
  'PUT /api/users/:user_id/activate': {
    subject: 'inactive',
    sample: (s) => ({ url: `/api/users/${s.id}/activate` }),
    expect: [401, 403, 200, 401, 401],
  },
  'PUT /api/users/:user_id/deactivate': {
    sample: (s) => ({ url: `/api/users/${s.id}/deactivate` }),
    expect: [401, 403, 200, 401, 401],
  },
  'PUT /api/users/:user_id/promote-admin': {
    sample: (s) => ({ url: `/api/users/${s.id}/promote-admin` }),
    expect: [401, 403, 200, 401, 401],
  },
  'PUT /api/users/:user_id/revoke-admin': {
    subject: 'admin',
    sample: (s) => ({ url: `/api/users/${s.id}/revoke-admin` }),
    expect: [401, 403, 200, 401, 401],
  },
  // Admin panel (spec 4.4): summary and users.
  'GET /api/admin/panel/summary': {
    sample: () => ({ url: '/api/admin/panel/summary' }),
    expect: [401, 403, 200, 401, 401],
  },
  'GET /api/admin/panel/users': {
    sample: () => ({ url: '/api/admin/panel/users?offset=0&limit=5' }),
    expect: [401, 403, 200, 401, 401],
  },
  'GET /api/admin/panel/users/:user_id': {
    sample: (s) => ({ url: `/api/admin/panel/users/${s.id}` }),
    expect: [401, 403, 200, 401, 401],
  },
  'PUT /api/admin/panel/users/:user_id': {
    sample: (s) => ({
      url: `/api/admin/panel/users/${s.id}`,
      payload: { full_name: 'Renamed In Panel', is_active: false, reason: 'Matrix case' },
    }),
    expect: [401, 403, 200, 401, 401],
  },
  'DELETE /api/admin/panel/users/:user_id': {
    sample: (s) => ({ url: `/api/admin/panel/users/${s.id}` }),
    expect: [401, 403, 200, 401, 401],
  },
  'GET /api/admin/panel/users/:user_id/role-history': {
    sample: (s) => ({ url: `/api/admin/panel/users/${s.id}/role-history` }),
    expect: [401, 403, 200, 401, 401],
  },
  'GET /api/admin/panel/users/:user_id/lock-reasons': {
    sample: (s) => ({ url: `/api/admin/panel/users/${s.id}/lock-reasons` }),
    expect: [401, 403, 200, 401, 401],
  },
  // Admin panel (spec 4.4): live sockets on every instance, this instance's figures.
  'GET /api/admin/panel/websocket-status': {
    sample: () => ({ url: '/api/admin/panel/websocket-status' }),
    expect: [401, 403, 200, 401, 401],
  },
  'GET /api/admin/panel/metrics': {
    sample: () => ({ url: '/api/admin/panel/metrics' }),
    expect: [401, 403, 200, 401, 401],
  },
  // Conversations are the caller's own (DECISIONS 3): an administrator acts on theirs like anyone.
  'GET /conversations': {
    sample: () => ({ url: '/conversations?page=1&pageSize=20' }),
    expect: [401, 200, 200, 401, 401],
  },
  'POST /conversations': {
    sample: () => ({ url: '/conversations', payload: { title: 'Matrix conversation' } }),
    expect: [401, 201, 201, 401, 401],
  },
  'GET /conversations/:conversation_id': {
    owned: true,
    sample: (_s, _c, o) => ({ url: conversationUrl(o) }),
    expect: [401, 200, 200, 401, 401],
  },
  'PUT /conversations/:conversation_id': {
    owned: true,
    sample: (_s, _c, o) => ({
      url: conversationUrl(o),
      payload: { title: 'Renamed', archived: true },
    }),
    expect: [401, 200, 200, 401, 401],
  },
  'DELETE /conversations/:conversation_id': {
    owned: true,
    sample: (_s, _c, o) => ({ url: conversationUrl(o) }),
    expect: [401, 200, 200, 401, 401],
  },
  'POST /conversations/:conversation_id/branches': {
    owned: true,
    sample: (_s, _c, o) => ({
      url: conversationUrl(o, '/branches'),
      payload: { parent_message_id: ownedOf(o).messageId, initial_message: 'Another way' },
    }),
    expect: [401, 201, 201, 401, 401],
  },
  'GET /conversations/:conversation_id/branches': {
    owned: true,
    sample: (_s, _c, o) => ({ url: conversationUrl(o, '/branches') }),
    expect: [401, 200, 200, 401, 401],
  },
  'GET /conversations/:conversation_id/messages': {
    owned: true,
    sample: (_s, _c, o) => ({ url: conversationUrl(o, '/messages?branch_id=main&limit=50') }),
    expect: [401, 200, 200, 401, 401],
  },
  'GET /api/admin/kb/documents': {
    kb: true,
    sample: () => ({ url: '/api/admin/kb/documents?offset=0&limit=5&status=failed' }),
    expect: [401, 403, 200, 401, 401],
  },
  'POST /api/admin/kb/documents': {
    sample: uploadSample,
    expect: [401, 403, 202, 401, 401],
  },
  'GET /api/admin/kb/documents/:document_id': {
    kb: true,
    sample: (_s, _c, _o, k) => ({ url: `/api/admin/kb/documents/${kbOf(k).id}` }),
    expect: [401, 403, 200, 401, 401],
  },
  'DELETE /api/admin/kb/documents/:document_id': {
    kb: true,
    sample: (_s, _c, _o, k) => ({ url: `/api/admin/kb/documents/${kbOf(k).id}` }),
    expect: [401, 403, 200, 401, 401],
  },
  'POST /api/admin/kb/documents/:document_id/reindex': {
    kb: true,
    sample: (_s, _c, _o, k) => ({ url: `/api/admin/kb/documents/${kbOf(k).id}/reindex` }),
    expect: [401, 403, 202, 401, 401],
  },
  'GET /api/admin/kb/jobs': {
    kb: true,
    sample: (_s, _c, _o, k) => ({
      url: `/api/admin/kb/jobs?offset=0&limit=5&state=failed&doc_key=${kbOf(k).docKey}`,
    }),
    expect: [401, 403, 200, 401, 401],
  },
  'GET /api/admin/kb/jobs/:job_id': {
    kb: true,
    sample: (_s, _c, _o, k) => ({ url: `/api/admin/kb/jobs/${kbOf(k).jobId}` }),
    expect: [401, 403, 200, 401, 401],
  },
  'POST /api/admin/kb/jobs/:job_id/retry': {
    kb: true,
    sample: (_s, _c, _o, k) => ({ url: `/api/admin/kb/jobs/${kbOf(k).jobId}/retry` }),
    expect: [401, 403, 202, 401, 401],
  },
  'GET /api/admin/kb/search': {
    sample: () => ({ url: '/api/admin/kb/search?q=heart%20failure&limit=5&category=cardiology' }),
    expect: [401, 403, 200, 401, 401],
  },
  // Voice (spec 4.9): every signed-in user. Half a second of silence: recognised as nothing, so the
  // audio turn answers without asking the model.
  'POST /api/voice/session': {
    sample: () => ({ url: '/api/voice/session', payload: { barge_in: true } }),
    expect: [401, 201, 201, 401, 401],
  },
  'POST /api/voice/audio': {
    sample: () => {
      const body = Buffer.concat([
        Buffer.from(
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.pcm"\r\n` +
            'Content-Type: application/octet-stream\r\n\r\n',
        ),
        Buffer.alloc(16_000),
        Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
      ]);
      return {
        url: '/api/voice/audio',
        payload: body,
        contentType: `multipart/form-data; boundary=${BOUNDARY}`,
      };
    },
    expect: [401, 200, 200, 401, 401],
  },
  // Feedback (spec 4.9): every signed-in user submits; administrators read the summary and export.
  'POST /api/feedback': {
    sample: () => ({
      url: '/api/feedback',
      payload: { session_id: 'matrix-session', rating: 4, category: 'voice_quality' },
    }),
    expect: [401, 201, 201, 401, 401],
  },
  'GET /api/admin/feedback/summary': {
    sample: () => ({ url: '/api/admin/feedback/summary?days=30' }),
    expect: [401, 403, 200, 401, 401],
  },
  'GET /api/admin/feedback/export': {
    sample: () => ({ url: '/api/admin/feedback/export?format=csv&days=30' }),
    expect: [401, 403, 200, 401, 401],
  },
  // Audit log (spec 4.4): administrators only.
  'GET /api/admin/panel/audit-logs': {
    sample: () => ({ url: '/api/admin/panel/audit-logs?limit=5&action=auth.*' }),
    expect: [401, 403, 200, 401, 401],
  },
  'GET /api/admin/panel/audit-logs/verify': {
    sample: () => ({ url: '/api/admin/panel/audit-logs/verify' }),
    expect: [401, 403, 200, 401, 401],
  },
  'GET /api/admin/panel/audit-logs/export': {
    sample: () => ({ url: '/api/admin/panel/audit-logs/export?format=csv&action=auth.login' }),
    expect: [401, 403, 200, 401, 401],
  },
  // Cache (spec 4.6): administrators only.
  'GET /api/admin/cache/stats': {
    sample: () => ({ url: '/api/admin/cache/stats' }),
    expect: [401, 403, 200, 401, 401],
  },
  'POST /api/admin/cache/clear': {
    sample: () => ({ url: '/api/admin/cache/clear' }),
    expect: [401, 403, 200, 401, 401],
  },
  'POST /api/admin/cache/invalidate': {
    sample: () => ({ url: '/api/admin/cache/invalidate', payload: { pattern: 'kb-search:*' } }),
    expect: [401, 403, 200, 401, 401],
  },
  // Feature flags (spec 4.7): administrators manage them; every user reads their own values.
  'GET /api/feature-flags': {
    sample: () => ({ url: '/api/feature-flags' }),
    expect: [401, 200, 200, 401, 401],
  },
  'GET /api/admin/feature-flags': {
    sample: () => ({ url: '/api/admin/feature-flags' }),
    expect: [401, 403, 200, 401, 401],
  },
  'POST /api/admin/feature-flags': {
    sample: () => ({
      url: '/api/admin/feature-flags',
      payload: { name: `matrix.new.${randomBytes(4).toString('hex')}`, enabled: true },
    }),
    expect: [401, 403, 201, 401, 401],
  },
  'GET /api/admin/feature-flags/:flag_name': {
    flag: true,
    sample: (s) => ({ url: flagUrl(s) }),
    expect: [401, 403, 200, 401, 401],
  },
  'PATCH /api/admin/feature-flags/:flag_name': {
    flag: true,
    sample: (s) => ({ url: flagUrl(s), payload: { rollout_percentage: 30 } }),
    expect: [401, 403, 200, 401, 401],
  },
  'DELETE /api/admin/feature-flags/:flag_name': {
    flag: true,
    sample: (s) => ({ url: flagUrl(s) }),
    expect: [401, 403, 200, 401, 401],
  },
  'POST /api/admin/feature-flags/:flag_name/toggle': {
    flag: true,
    sample: (s) => ({ url: flagUrl(s, '/toggle') }),
    expect: [401, 403, 200, 401, 401],
  },
};

/**
 * The auth level the spec gives each path (first match wins): section 4's Auth columns and headings,
 * section 5.2 for the public routes, DECISIONS 7 for the caller's own flags. A route that matches
 * no rule fails: decide from the spec and add one.
 */
const SPEC_AUTH: [method: RegExp, path: RegExp, level: AuthLevel, source: string][] = [
  [/^GET$/, /^\/(health|ready|metrics)$/, 'none', 'spec 4.8, 5.2'],
  [/^HEAD$/, /^\/(health|ready)$/, 'none', 'spec 4.8, 5.2 (load balancers probe with HEAD)'],
  [/^POST$/, /^\/api\/auth\/(register|login|refresh)$/, 'none', 'spec 4.1, 5.2'],
  [/^(GET|POST)$/, /^\/api\/auth\/(logout|me)$/, 'user', 'spec 4.1'],
  [/./, /^\/api\/users\/me(\/|$)/, 'user', 'spec 4.2'],
  [/./, /^\/api\/users(\/|$)/, 'admin', 'spec 4.2'],
  [/./, /^\/conversations(\/|$)/, 'user', 'spec 4.3'],
  [/./, /^\/api\/admin\//, 'admin', 'spec 4.4 to 4.7, 4.9'],
  [/^POST$/, /^\/api\/(voice\/session|voice\/audio|feedback)$/, 'user', 'spec 4.9'],
  [/^GET$/, /^\/api\/feature-flags$/, 'user', 'DECISIONS 7'],
];

const keyOf = (r: Pick<RegisteredRoute, 'method' | 'url'>) => `${r.method} ${r.url}`;
const specAuth = (r: RegisteredRoute) =>
  SPEC_AUTH.find(([method, path]) => method.test(r.method) && path.test(r.url));
const isSuccess = (status: number) => status >= 200 && status < 300;
const isAdministrativeAction = (method: string, template: string, auth: AuthLevel | undefined) =>
  auth === 'admin' && (method !== 'GET' || template.endsWith('/export'));

describe('authorization matrix (PostgreSQL + Redis)', () => {
  let t: TestApp;
  let operator: TestUser; // the administrator who deactivates callers and prepares subjects
  beforeAll(async () => {
    // No indexing worker: the knowledge base's rows change only by the requests under test.
    t = await createTestApp({ env: { KB_WORKER_ENABLED: 'false' } });
    operator = await createUser(t.app, t.deps, { admin: true });
  });
  afterAll(() => t.close());

  const registered = () => new Map(t.routes.map((r) => [keyOf(r), r]));

  async function adminAction(userId: string, action: string) {
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/users/${userId}/${action}`,
      headers: bearer(operator.access),
    });
    expect(res.statusCode, res.body).toBe(200);
  }

  async function callerOfKind(kind: Caller): Promise<TestUser | null> {
    if (kind === 'anonymous') return null;
    const admin = kind === 'admin' || kind === 'deactivatedAdmin';
    const caller = await createUser(t.app, t.deps, { admin });
    if (kind === 'deactivated' || kind === 'deactivatedAdmin') {
      await adminAction(caller.id, 'deactivate');
    }
    return caller;
  }

  async function subjectFor(entry: Entry): Promise<TestUser> {
    const subject = await createUser(t.app, t.deps);
    if (entry.subject === 'inactive') await adminAction(subject.id, 'deactivate');
    if (entry.subject === 'admin') await adminAction(subject.id, 'promote-admin');
    return subject;
  }

  /** A conversation of `owner` with one message, for an entry with `owned`. */
  async function ownedBy(owner: TestUser): Promise<Owned> {
    const { id } = await t.deps.conversations.create(owner.id, { title: 'Matrix case' });
    const { message } = await t.deps.messages.append(owner.id, id, {
      role: 'user',
      content: 'Where it starts',
    });
    return { ownerId: owner.id, conversationId: id, messageId: message.id };
  }

  /** The feature flag of a case of an entry with `flag`: disabled, at a 50% rollout. */
  async function matrixFlag(subject: TestUser): Promise<void> {
    const at = new Date();
    const row = { enabled: false, description: 'Matrix case', rolloutPercentage: 50 };
    await flagsRepo.insert(t.deps.database.db, {
      name: flagNameOf(subject),
      ...row,
      createdAt: at,
      updatedAt: at,
    });
  }

  /**
   * A text document uploaded by the operator, as the upload route records one, whose indexing
   * job then failed: every knowledge-base route can act on it (the retry route needs the failure).
   */
  async function kbDocument(): Promise<KbDocument> {
    const docKey = `matrix-${randomBytes(5).toString('hex')}`;
    const { id: documentId, jobId } = await recordUpload(
      t.deps,
      operator,
      docKey,
      `Statins lower LDL cholesterol (${docKey}).\n`,
    );
    const db = t.deps.database.db;
    await jobsRepo.update(db, jobId, { state: 'failed', retryCount: 3, finishedAt: new Date() });
    await documentsRepo.update(db, documentId, { status: 'failed', error: 'fixture failure' });
    return { id: documentId, docKey, jobId };
  }

  const routeAuth = (key: string) => registered().get(key)?.auth;

  /**
   * An administrative action (any admin route that changes something, and the exports) leaves an
   * audit entry of its request: the administrator, the resource, the address and the user agent.
   */
  async function expectAudited(requestId: string, caller: TestUser): Promise<void> {
    const entries = await t.deps.database.db
      .select()
      .from(auditLogs)
      .where(eq(auditLogs.requestId, requestId));
    expect(entries.length, `no audit entry for request ${requestId}`).toBeGreaterThan(0);
    for (const entry of entries) {
      expect(entry).toMatchObject({ actorId: caller.id, actorEmail: caller.email });
      expect(entry.resourceType, entry.action).toEqual(expect.any(String));
      expect(entry.ip, entry.action).toEqual(expect.any(String));
      expect(entry.userAgent, entry.action).toEqual(expect.any(String));
    }
  }

  /** Every file under the file store's directory, temporary ones included. */
  async function storedFiles(): Promise<string[]> {
    const root = path.join(t.deps.config.dataDir, 'files');
    try {
      const entries = await readdir(root, { recursive: true, withFileTypes: true });
      return entries
        .filter((e) => !e.isDirectory())
        .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
        .sort();
    } catch (err) {
      if ((err as { code?: unknown }).code === 'ENOENT') return [];
      throw err;
    }
  }

  /** The case's document with its jobs, the knowledge base's counts, and the stored files. */
  async function kbSnapshot(kb: KbDocument | null) {
    const db = t.deps.database.db;
    return {
      documents: await db.$count(kbDocuments),
      jobs: await db.$count(kbIndexingJobs),
      files: await storedFiles(),
      document:
        kb === null ? null : await db.select().from(kbDocuments).where(eq(kbDocuments.id, kb.id)),
      documentJobs:
        kb === null
          ? null
          : await db
              .select()
              .from(kbIndexingJobs)
              .where(eq(kbIndexingJobs.documentId, kb.id))
              .orderBy(kbIndexingJobs.id),
    };
  }

  /**
   * The stored rows of the users a case involves, the user count, the conversation the case acts
   * on (its row and its branches with their message counts) with the conversation count, and the
   * knowledge base (the case's document and jobs, the counts, the stored files), and every feature
   * flag: a refusal changes none of them.
   */
  async function snapshot(users: (TestUser | null)[], owned: Owned | null, kb: KbDocument | null) {
    const db = t.deps.database.db;
    const rows = await Promise.all(
      users.map(async (u) => (u === null ? null : usersRepo.findById(db, u.id))),
    );
    const conversation =
      owned === null
        ? null
        : {
            row: await conversationsRepo.find(db, owned.ownerId, owned.conversationId),
            branches: await messagesRepo.branches(db, owned.conversationId),
          };
    const conversations = await Promise.all(
      users.map(async (u) =>
        u === null ? null : (await conversationsRepo.page(db, u.id, {}, 0, 100)).rows,
      ),
    );
    return {
      rows,
      count: await usersRepo.count(db),
      conversation,
      conversations,
      kb: await kbSnapshot(kb),
      flags: await db.select().from(featureFlags).orderBy(featureFlags.name),
    };
  }

  it('has exactly one entry for every registered route, and none for a route that is gone', () => {
    const routes = registered();
    expect(routes.size, 'a route is registered twice').toBe(t.routes.length);
    const missing = [...routes.keys()].filter((k) => !(k in MATRIX));
    const stale = Object.keys(MATRIX).filter((k) => !routes.has(k));
    expect(missing, 'registered routes without a matrix entry').toEqual([]);
    expect(stale, 'matrix entries for routes that are not registered').toEqual([]);
  });

  it('registers every route with the auth level the spec gives it', () => {
    const wrong = t.routes.flatMap((r) => {
      const rule = specAuth(r);
      if (rule === undefined) return [`${keyOf(r)}: no spec rule in SPEC_AUTH`];
      const [, , level, source] = rule;
      return r.auth === level ? [] : [`${keyOf(r)}: registered ${r.auth}, ${source} says ${level}`];
    });
    expect(wrong).toEqual([]);
    // Spot checks that do not depend on the rules above.
    const routes = registered();
    expect(routes.get('POST /api/auth/register')?.auth).toBe('none');
    expect(routes.get('GET /api/users/me')?.auth).toBe('user');
    expect(routes.get('PATCH /api/users/:user_id')?.auth).toBe('admin');
  });

  it('expects what each route’s auth level implies', () => {
    const routes = registered();
    const wrong = Object.entries(MATRIX).flatMap(([key, entry]) => {
      const auth = routes.get(key)?.auth;
      const [anonymous, user, admin, deactivated, deactivatedAdmin] = entry.expect;
      const fine =
        auth === 'none'
          ? isSuccess(anonymous) && entry.expect.every((s) => s === anonymous)
          : auth === 'user'
            ? anonymous === 401 &&
              isSuccess(user) &&
              (isSuccess(admin) || admin === 409) &&
              deactivated === 401 &&
              deactivatedAdmin === 401
            : auth === 'admin' &&
              anonymous === 401 &&
              user === 403 &&
              isSuccess(admin) &&
              deactivated === 401 &&
              deactivatedAdmin === 401;
      return fine ? [] : [`${key} (${String(auth)}): ${entry.expect.join(', ')}`];
    });
    expect(wrong).toEqual([]);
  });

  const cases = Object.entries(MATRIX).flatMap(([key, entry]) =>
    CALLERS.map((caller, i) => ({ key, entry, caller, status: entry.expect[i] ?? 0 })),
  );

  it.each(cases)('$key as $caller: $status', async ({ key, entry, caller: kind, status }) => {
    const [method = '', template = ''] = key.split(' ');
    const subject = await subjectFor(entry);
    const caller = await callerOfKind(kind);
    const owned = entry.owned ? await ownedBy(caller ?? subject) : null;
    const kb = entry.kb ? await kbDocument() : null;
    if (entry.flag) await matrixFlag(subject);
    const sample = entry.sample(subject, caller, owned, kb);
    const route = new RegExp(`^${template.replace(/:[A-Za-z0-9_]+/g, '[^/?]+')}(\\?|$)`);
    expect(sample.url, 'the sample calls the route of its entry').toMatch(route);
    const before = await snapshot([subject, caller], owned, kb);

    const res = await t.app.inject({
      method: method as 'GET',
      url: sample.url,
      headers: {
        ...(caller === null ? {} : bearer(caller.access)),
        ...(sample.contentType === undefined ? {} : { 'content-type': sample.contentType }),
      },
      ...(sample.payload === undefined ? {} : { payload: sample.payload }),
    });

    expect(res.statusCode, res.body).toBe(status);
    if (isSuccess(status)) {
      // The feedback and audit-log exports are CSV files; every other success under /api is the
      // JSON envelope.
      if (String(res.headers['content-type']).startsWith('text/csv')) {
        expect(res.body).toMatch(/^id,(created_at|seq),/);
      } else if (/^\/(api|conversations)\//.test(sample.url)) dataOf(res);
      if (caller !== null && isAdministrativeAction(method, template, routeAuth(key))) {
        await expectAudited(String(res.headers['x-request-id']), caller);
      }
      return;
    }
    const code = { 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 409: 'CONFLICT' }[status];
    expect(errorOf(res, status).code).toBe(code);
    // A refused request changed nothing: not the caller, not the user it named, not the user count,
    // not the conversation it named nor anyone's conversations, not the knowledge base, no flag.
    expect(await snapshot([subject, caller], owned, kb)).toEqual(before);
  });

  it.each(['/docs', '/docs/', '/redoc', '/redoc/redoc.standalone.js', '/openapi.json'])(
    'serves the public docs route %s without a token',
    async (url) => {
      expect(t.routes.some((r) => r.url === url)).toBe(false);
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.body.length).toBeGreaterThan(100);
    },
  );

  it('documents bearer security on exactly the routes that need a token, naming the admin role', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    const doc = res.json<{ paths: Record<string, Record<string, { security?: unknown }>> }>();
    const wrong = t.routes.flatMap((r) => {
      const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      if (op === undefined) return [`${keyOf(r)}: not documented`];
      const roles = r.auth === 'admin' ? ['admin'] : [];
      const security = r.auth === 'none' ? [] : [{ bearerAuth: roles }];
      return JSON.stringify(op.security) === JSON.stringify(security)
        ? []
        : [`${keyOf(r)}: security ${JSON.stringify(op.security)}`];
    });
    expect(wrong).toEqual([]);
  });
});
