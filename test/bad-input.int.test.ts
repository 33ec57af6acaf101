import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { inArray } from 'drizzle-orm';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_BODY_LIMIT } from '../src/app.js';
import {
  branches,
  conversationCounts,
  conversations,
  kbChunks,
  kbDocuments,
  featureFlags,
  kbIndexingJobs,
  messages,
} from '../src/db/schema/index.js';
import { messagesRepo } from '../src/modules/conversations/messages-repo.js';
import { conversationsRepo } from '../src/modules/conversations/repo.js';
import { jobsRepo } from '../src/modules/knowledge/jobs-repo.js';
import { documentsRepo } from '../src/modules/knowledge/repo.js';
import { MAX_UPLOAD_BYTES } from '../src/modules/knowledge/upload.js';
import { usersRepo } from '../src/modules/users/repo.js';
import { flagsRepo } from '../src/modules/flags/repo.js';
import type { AuthLevel } from '../src/platform/http/route-policy.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import {
  PASSWORD,
  bearer,
  createUser,
  dataOf,
  errorOf,
  login,
  register,
  uniqueEmail,
  type TestUser,
} from './helpers/factories.js';
import { recordUpload } from './helpers/knowledge.js';

/**
 * Bad input for every registered route: a table gives each route a request it accepts and the bad
 * inputs that only it has; the cases every route of its kind shares (tokens, JSON bodies, path ids,
 * query strings) are added from what the table says the route takes. Every refusal must be the
 * error envelope with a clear code, validation errors must name the fields, nothing may be half
 * written, and nothing may answer 500.
 */

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Body = Record<string, unknown>;

/** A stored conversation: its owner, id, the ids of its messages on `main`, and its forks. */
interface StoredConversation {
  ownerId: string;
  id: string;
  messages: string[];
  /** Forks, each with the ids of its own messages. */
  forks: { id: string; messages: string[] }[];
}

interface Fixtures {
  /** Signed in with the role the route requires (an ordinary user for public routes). */
  caller: TestUser;
  /** Another ordinary user, the one the route acts on where it takes an id. */
  subject: TestUser;
  /**
   * The caller's conversation: two messages on `main`, and a fork after the first with one
   * message of its own.
   */
  conversation: StoredConversation;
  /** Another conversation of the caller, with one message. */
  otherConversation: StoredConversation;
  /** The subject's conversation: two messages on `main` and a fork like the caller's. */
  subjectConversation: StoredConversation;
  /** Knowledge-base documents and jobs, made only for the routes that declare `kb`. */
  kb: KbFixtures | null;
  /** The name of a feature flag (disabled, at 50%) made with every set of fixtures. */
  flag: string;
}

/** A knowledge-base document version and its latest indexing job. */
interface StoredDocument {
  id: string;
  jobId: string;
}

/** Knowledge-base fixtures, uploaded by the caller (the indexing worker is off: nothing moves). */
interface KbFixtures {
  docKey: string;
  /** The current version of `docKey`; its job failed. */
  current: StoredDocument;
  /** The version `current` superseded; its job is `superseded`. */
  superseded: StoredDocument;
  /** Another document, its job pending. */
  pending: StoredDocument;
}

/** One part of a multipart/form-data body: a field, or a file when it has a file name. */
interface FormPart {
  name: string;
  value: string | Buffer;
  filename?: string;
  type?: string;
}

interface Sample {
  params?: Record<string, string>;
  query?: string;
  body?: Body;
  /** A multipart/form-data body. */
  form?: FormPart[];
}

interface Case {
  name: string;
  status: number;
  /** For 422: exactly the fields the error names. */
  fields?: string[];
  message?: RegExp;
  /** Merged into the sample body; an `undefined` value drops the field. */
  body?: Body | ((f: Fixtures) => Body);
  /** Replaces the body entirely: raw bytes and their content type (none when absent). */
  raw?: { payload: string | Buffer; type?: string };
  /** Turns the sample's multipart parts into the case's. */
  form?: (parts: FormPart[], f: Fixtures) => FormPart[];
  params?: Record<string, string> | ((f: Fixtures) => Record<string, string>);
  /** Replaces the sample's query string. */
  query?: string | ((f: Fixtures) => string);
  /** Appended to the sample's query string. */
  extraQuery?: string;
  /** Replaces the caller's Authorization header. */
  auth?: (f: Fixtures) => string;
  /** Moves the service clock for this request. */
  clockMs?: number;
}

interface RouteInputs {
  auth: AuthLevel;
  /** Takes a JSON body. */
  body?: true;
  /** Takes a multipart/form-data body (its own cases instead of the JSON body cases). */
  multipart?: { form: () => FormPart[]; required: string[] };
  /** Needs the knowledge-base fixtures. */
  kb?: true;
  /** Path parameters (UUIDs, except `flag_name`: a feature flag's name). */
  params?: string[];
  /** Declares query parameters. */
  query?: true;
  /**
   * Path parameters naming another user's resource, which the route answers as unknown (404, no
   * existence leak; DECISIONS 3). Without it, the sample names another user and an ordinary
   * caller gets 403.
   */
  ofAnother?: (f: Fixtures) => Record<string, string>;
  sample(f: Fixtures): Sample;
  cases?: Case[];
}

const NEW_PASSWORD = 'a different passphrase 42';
const SQL = "' OR 1=1 --";

/** An address of exactly `n` characters: a 64-character local part and labels of at most 63. */
function emailOfLength(n: number): string {
  const local = (randomBytes(8).toString('hex') + 'a'.repeat(64)).slice(0, 64);
  let domain = 'test';
  while (local.length + 1 + domain.length < n) {
    const room = n - (local.length + 1 + domain.length) - 1;
    domain = `${'d'.repeat(Math.min(63, room))}.${domain}`;
  }
  return `${local}@${domain}`;
}

const registration = (): Body => ({
  email: uniqueEmail('bad'),
  password: PASSWORD,
  full_name: 'Bad Input',
});

/** A body the schema refuses, naming one field. */
const invalid = (name: string, field: string, body: NonNullable<Case['body']>): Case => ({
  name,
  status: 422,
  fields: [field],
  body,
});

/** Bad values for a `full_name` field, wherever it is accepted. */
const badNames = (field: string): Case[] =>
  (
    [
      ['as a number', 42],
      ['as an object', { first: 'Ada' }],
      ['null', null],
      ['empty', ''],
      ['blank', '   '],
      ['over 200 characters', 'a'.repeat(201)],
      ['over 200 code points of emoji', '🩺'.repeat(201)],
      ['with a NUL', 'Ada\u0000Lovelace'],
      ['with an escape sequence', 'Ada\u001b[31m'],
      ['with a newline', 'Ada\nLovelace'],
      ['with DEL', 'Ada\u007f'],
      ['with a C1 control character', 'Ada\u0085Lovelace'],
      ['with a lone surrogate', 'Ada\ud800'],
    ] as const
  ).map(([what, value]) => invalid(`full_name ${what}`, field, { full_name: value }));

/** Bad values for an `email` field. */
const badEmails = (field: string): Case[] =>
  (
    [
      ['as a number', 12345],
      ['as an array', ['a@example.test']],
      ['null', null],
      ['without an @', 'not-an-email'],
      ['over 254 characters', emailOfLength(255)],
      ['that looks like SQL', SQL],
      ['with a NUL', 'a\u0000b@example.test'],
    ] as const
  ).map(([what, value]) => invalid(`email ${what}`, field, { email: value }));

const unexpected = (field: string, value: unknown): Case =>
  invalid(`unknown field ${field}`, `body.${field}`, { [field]: value });

const missing = (...fields: string[]): Case => ({
  name: `missing ${fields.join(', ')}`,
  status: 422,
  fields: fields.map((f) => `body.${f}`),
  body: () => Object.fromEntries(fields.map((f) => [f, undefined])),
});

/** Bad values for a required one-line text field of at most `max` characters (titles, folders). */
const badLines = (field: string, max: number): [string, unknown][] => [
  [`${field} as a number`, 42],
  [`${field} as a boolean`, true],
  [`${field} as an array`, ['a']],
  [`${field} as an object`, { name: 'a' }],
  [`empty ${field}`, ''],
  [`blank ${field}`, '   '],
  [`${field} of a tab alone`, '\t'],
  [`${field} over ${max} characters`, 'a'.repeat(max + 1)],
  [`${field} over ${max} code points of emoji`, '🩺'.repeat(max + 1)],
  [`${field} with a NUL`, 'a\u0000b'],
  [`${field} with an escape sequence`, 'a\u001b[31m'],
  [`${field} with a newline`, 'a\nb'],
  [`${field} with a carriage return`, 'a\rb'],
  [`${field} with DEL`, 'a\u007f'],
  [`${field} with a C1 control character`, 'a\u0085b'],
  [`${field} with a lone high surrogate`, 'a\ud800'],
  [`${field} with a lone low surrogate`, '\udc00a'],
];

const badTitles = (): Case[] => [
  invalid('title null', 'body.title', { title: null }),
  ...badLines('title', 200).map(([name, title]) => invalid(name, 'body.title', { title })),
];

/** `folder_id` may be null (no folder), else a line of at most 128 characters. */
const badFolders = (): Case[] =>
  badLines('folder_id', 128).map(([name, folder_id]) =>
    invalid(name, 'body.folder_id', { folder_id }),
  );

/** Bad values for message text (`initial_message`): tabs and line breaks are allowed there. */
const badMessages = (): Case[] =>
  (
    [
      ['as a number', 42],
      ['as a boolean', false],
      ['as an array', ['hello']],
      ['null', null],
      ['empty', ''],
      ['blank', '   '],
      ['of line breaks and tabs alone', '\n\t\r\n'],
      ['over 32000 characters', 'a'.repeat(32_001)],
      ['with a NUL', 'hello\u0000world'],
      ['with an escape sequence', 'hello\u001b[31m'],
      ['with a form feed', 'hello\u000cworld'],
      ['with DEL', 'hello\u007f'],
      ['with a lone surrogate', 'hello\ud800'],
    ] as const
  ).map(([what, value]) =>
    invalid(`initial_message ${what}`, 'body.initial_message', { initial_message: value }),
  );

/** A query the schema refuses, naming one parameter. */
const badQuery = (query: string, field: string): Case => ({
  name: query,
  status: 422,
  fields: [`query.${field}`],
  query,
});

/** The bad queries of a user list paged by `offset` and `limit` (max 100; no other parameter). */
const offsetPageCases = (): Case[] =>
  (
    [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=', 'limit'],
      ['limit=5&limit=6', 'limit'],
      [`limit=${encodeURIComponent('5; DROP TABLE users')}`, 'limit'],
      ['offset=-1', 'offset'],
      ['offset=1.5', 'offset'],
      ['offset=abc', 'offset'],
      ['offset=1000001', 'offset'],
      [`offset=${encodeURIComponent(SQL)}`, 'offset'],
      ['page=2', 'page'],
      ['sort=email', 'sort'],
    ] as const
  ).map(([query, field]) => badQuery(query, field));

/** A request that names nothing of the caller's: 404 NOT_FOUND. */
const unknown = (name: string, c: Omit<Case, 'name' | 'status'>): Case => ({
  name,
  status: 404,
  ...c,
});

const conversationParams = (f: Fixtures) => ({ conversation_id: f.conversation.id });
const othersConversation = (f: Fixtures) => ({ conversation_id: f.subjectConversation.id });
const first = (ids: string[]): string => {
  const [id] = ids;
  if (id === undefined) throw new Error('the fixture has no message');
  return id;
};
const forkOf = (c: StoredConversation) => {
  const [fork] = c.forks;
  if (fork === undefined) throw new Error('the fixture has no fork');
  return fork;
};

/** The knowledge-base fixtures of a route that declares `kb`. */
function kbOf(f: Fixtures): KbFixtures {
  if (f.kb === null) throw new Error('the entry needs `kb: true`');
  return f.kb;
}

const BOUNDARY = 'bad-input-9f3c2a';
const MULTIPART_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

/** A multipart/form-data body of `parts`, delimited by `boundary`. */
function multipart(parts: FormPart[], boundary = BOUNDARY): Buffer {
  const chunks = parts.flatMap((p) => {
    const file = p.filename === undefined ? '' : `; filename="${p.filename}"`;
    const type = p.type === undefined ? '' : `Content-Type: ${p.type}\r\n`;
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${file}\r\n${type}\r\n`;
    return [Buffer.from(head), Buffer.from(p.value), Buffer.from('\r\n')];
  });
  return Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]);
}

const filePart = (
  value: string | Buffer,
  filename = 'notes.txt',
  type = 'text/plain',
): FormPart => ({
  name: 'file',
  value,
  filename,
  type,
});

/** A fresh upload: unique title (so a unique doc_key) and unique content. */
const uploadForm = (): FormPart[] => {
  const tag = randomBytes(4).toString('hex');
  return [
    { name: 'title', value: `Heart failure guideline ${tag}` },
    { name: 'category', value: 'cardiology' },
    filePart(`Loop diuretics relieve congestion in heart failure (${tag}).\n`),
  ];
};

/** Half a second of PCM16 silence and a language: a valid `POST /api/voice/audio` form. */
const silenceForm = (): FormPart[] => [
  filePart(Buffer.alloc(16_000), 'silence.pcm', 'application/octet-stream'),
  { name: 'language', value: 'en' },
];

/** A PCM16 WAV header saying `channels` and `dataBytes`, followed by 100 ms of silence. */
const wavHeader = ({
  channels = 1,
  dataBytes = 3200,
}: {
  channels?: number;
  dataBytes?: number;
}) => {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + 3200, 4);
  h.write('WAVEfmt ', 8, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(16_000, 24);
  h.writeUInt32LE(32_000 * Math.max(channels, 1), 28);
  h.writeUInt16LE(2 * Math.max(channels, 1), 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(dataBytes, 40);
  return Buffer.concat([h, Buffer.alloc(3200)]);
};

type FormEdit = NonNullable<Case['form']>;

/** The parts with the field `name` set to `value` (appended when absent), or dropped (undefined). */
const withField =
  (name: string, value: string | undefined): FormEdit =>
  (parts) => {
    const others = parts.filter((p) => p.name !== name);
    return value === undefined ? others : [...others, { name, value }];
  };

/** The parts with the file's bytes replaced. */
const withFile =
  (value: string | Buffer): FormEdit =>
  (parts) =>
    parts.map((p) => (p.name === 'file' ? { ...p, value } : p));

/** The file first, then the fields as edited. */
const fileFirst =
  (edit: FormEdit = (p) => p): FormEdit =>
  (parts, f) => {
    const edited = edit(parts, f);
    return [...edited.filter((p) => p.name === 'file'), ...edited.filter((p) => p.name !== 'file')];
  };

const upload = (name: string, status: number, form: FormEdit, fields?: string[]): Case => ({
  name,
  status,
  form,
  ...(fields === undefined ? {} : { fields }),
});

/** An upload whose field `name` is refused (422 naming it), before and after the file. */
const badField = (what: string, name: string, value: string): Case[] => [
  upload(what, 422, withField(name, value), [`body.${name}`]),
  upload(`${what}, sent after the file`, 422, fileFirst(withField(name, value)), [`body.${name}`]),
];

/** Bad values for a one-line upload field of at most `max` characters. */
const badFormLines = (name: string, max: number): Case[] =>
  (
    [
      [`empty ${name}`, ''],
      [`blank ${name}`, '   '],
      [`${name} over ${String(max)} characters`, 'a'.repeat(max + 1)],
      [`${name} over ${String(max)} code points of emoji`, '🩺'.repeat(max + 1)],
      [`${name} over the 4096-byte field limit`, 'a'.repeat(5000)],
      [`${name} with a NUL`, 'a\u0000b'],
      [`${name} with an escape sequence`, 'a\u001b[31m'],
      [`${name} with a newline`, 'a\nb'],
      [`${name} with DEL`, 'a\u007f'],
      [`${name} with a C1 control character`, 'a\u0085b'],
    ] as const
  ).flatMap(([what, value]) => badField(what, name, value));

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154',
  'hex',
);

const INPUTS: Record<string, RouteInputs> = {
  'GET /health': { auth: 'none', sample: () => ({}) },
  'GET /ready': { auth: 'none', sample: () => ({}) },
  'HEAD /health': { auth: 'none', sample: () => ({}) },
  'HEAD /ready': { auth: 'none', sample: () => ({}) },
  'GET /metrics': { auth: 'none', sample: () => ({}) },
  'POST /api/auth/register': {
    auth: 'none',
    body: true,
    sample: () => ({ body: registration() }),
    cases: [
      invalid('password as a number', 'body.password', { password: 12345678 }),
      invalid('password too short', 'body.password', { password: 'short12' }),
      invalid('password over 128', 'body.password', { password: 'p'.repeat(129) }),
      {
        name: 'a common password',
        status: 422,
        fields: ['body.password'],
        message: /rejected/,
        body: () => ({ password: 'Sunshine' }),
      },
      {
        name: 'the email as password',
        status: 422,
        fields: ['body.password'],
        body: () => {
          const email = uniqueEmail('same');
          return { email, password: email };
        },
      },
      missing('email'),
      missing('password'),
      missing('full_name'),
      missing('email', 'password', 'full_name'),
      unexpected('is_admin', true),
      unexpected('admin_role', 'admin'),
      ...badEmails('body.email'),
      ...badNames('body.full_name'),
    ],
  },
  'POST /api/auth/login': {
    auth: 'none',
    body: true,
    sample: (f) => ({ body: { email: f.subject.email, password: f.subject.password } }),
    cases: [
      invalid('password as a boolean', 'body.password', { password: true }),
      invalid('empty password', 'body.password', { password: '' }),
      invalid('password over 128', 'body.password', { password: 'p'.repeat(129) }),
      missing('password'),
      missing('email', 'password'),
      unexpected('remember_me', true),
      ...badEmails('body.email'),
    ],
  },
  'POST /api/auth/refresh': {
    auth: 'none',
    body: true,
    sample: (f) => ({ body: { refresh_token: f.subject.refresh } }),
    cases: [
      invalid('refresh_token as a number', 'body.refresh_token', { refresh_token: 42 }),
      invalid('refresh_token null', 'body.refresh_token', { refresh_token: null }),
      invalid('empty refresh_token', 'body.refresh_token', { refresh_token: '' }),
      invalid('refresh_token over 4096', 'body.refresh_token', { refresh_token: 'a'.repeat(4097) }),
      missing('refresh_token'),
      unexpected('access_token', 'x'),
      {
        name: 'a refresh_token that is no JWT',
        status: 401,
        body: () => ({ refresh_token: 'not.a.jwt' }),
      },
      {
        name: 'an access token as refresh_token',
        status: 401,
        body: (f) => ({ refresh_token: f.subject.access }),
      },
    ],
  },
  'POST /api/auth/logout': { auth: 'user', sample: () => ({}) },
  'GET /api/auth/me': { auth: 'user', sample: () => ({}) },
  'GET /api/users/me': { auth: 'user', sample: () => ({}) },
  'PUT /api/users/me': {
    auth: 'user',
    body: true,
    sample: () => ({ body: { full_name: 'Renamed Self' } }),
    cases: [
      invalid('an empty object', 'body', { full_name: undefined }),
      {
        name: 'a valid name with an invalid email',
        status: 422,
        fields: ['body.email'],
        body: () => ({ full_name: 'Half Written', email: 'nope' }),
      },
      { name: "another user's email", status: 409, body: (f) => ({ email: f.subject.email }) },
      {
        name: "another user's email in capitals",
        status: 409,
        body: (f) => ({ email: f.subject.email.toUpperCase() }),
      },
      invalid("another user's id", 'body.id', (f) => ({ id: f.subject.id })),
      unexpected('is_admin', true),
      unexpected('admin_role', 'admin'),
      unexpected('is_active', true),
      unexpected('password', NEW_PASSWORD),
      ...badEmails('body.email'),
      ...badNames('body.full_name'),
    ],
  },
  'POST /api/users/me/change-password': {
    auth: 'user',
    body: true,
    sample: (f) => ({ body: { old_password: f.caller.password, new_password: NEW_PASSWORD } }),
    cases: [
      invalid('old_password as a number', 'body.old_password', { old_password: 12345678 }),
      invalid('new_password null', 'body.new_password', { new_password: null }),
      invalid('new_password too short', 'body.new_password', { new_password: 'short12' }),
      invalid('new_password over 128', 'body.new_password', { new_password: 'p'.repeat(129) }),
      invalid('a common new_password', 'body.new_password', { new_password: 'qwertyuiop' }),
      invalid('the email as new_password', 'body.new_password', (f) => ({
        new_password: f.caller.email,
      })),
      invalid('new_password equal to the old', 'body.new_password', (f) => ({
        new_password: f.caller.password,
      })),
      invalid('a wrong old_password', 'body.old_password', { old_password: 'not the password' }),
      missing('new_password'),
      missing('old_password', 'new_password'),
      unexpected('email', 'x@example.test'),
    ],
  },
  'DELETE /api/users/me': { auth: 'user', sample: () => ({}) },
  'GET /api/users': {
    auth: 'admin',
    query: true,
    sample: () => ({ query: 'offset=0&limit=5' }),
    cases: offsetPageCases(),
  },
  'GET /api/users/:user_id': {
    auth: 'admin',
    params: ['user_id'],
    sample: (f) => ({ params: { user_id: f.subject.id } }),
  },
  'PATCH /api/users/:user_id': {
    auth: 'admin',
    body: true,
    params: ['user_id'],
    sample: (f) => ({ params: { user_id: f.subject.id }, body: { full_name: 'Renamed By Admin' } }),
    cases: [
      invalid('an empty object', 'body', { full_name: undefined }),
      invalid('is_active "true"', 'body.is_active', { is_active: 'true' }),
      invalid('is_active 0', 'body.is_active', { is_active: 0 }),
      invalid('is_active null', 'body.is_active', { is_active: null }),
      invalid('admin_role "root"', 'body.admin_role', { admin_role: 'root' }),
      invalid('admin_role true', 'body.admin_role', { admin_role: true }),
      {
        name: 'a valid name with is_active "false"',
        status: 422,
        fields: ['body.is_active'],
        body: () => ({ full_name: 'Half Written', is_active: 'false' }),
      },
      {
        name: 'a valid role with an invalid name',
        status: 422,
        fields: ['body.full_name'],
        body: () => ({ admin_role: 'admin', full_name: '\u0000' }),
      },
      { name: "another user's email", status: 409, body: (f) => ({ email: f.caller.email }) },
      unexpected('password', NEW_PASSWORD),
      unexpected('id', randomUUID()),
      ...badEmails('body.email'),
      ...badNames('body.full_name'),
    ],
  },
  'PUT /api/users/:user_id/activate': {
    auth: 'admin',
    params: ['user_id'],
    sample: (f) => ({ params: { user_id: f.subject.id } }),
  },
  'PUT /api/users/:user_id/deactivate': {
    auth: 'admin',
    params: ['user_id'],
    sample: (f) => ({ params: { user_id: f.subject.id } }),
  },
  'PUT /api/users/:user_id/promote-admin': {
    auth: 'admin',
    params: ['user_id'],
    sample: (f) => ({ params: { user_id: f.subject.id } }),
  },
  'PUT /api/users/:user_id/revoke-admin': {
    auth: 'admin',
    params: ['user_id'],
    sample: (f) => ({ params: { user_id: f.subject.id } }),
  },
  // Admin panel (spec 4.4): summary and users.
  'GET /api/admin/panel/summary': { auth: 'admin', sample: () => ({}) },
  'GET /api/admin/panel/users': {
    auth: 'admin',
    query: true,
    sample: () => ({ query: 'offset=0&limit=5' }),
    cases: offsetPageCases(),
  },
  'GET /api/admin/panel/users/:user_id': {
    auth: 'admin',
    params: ['user_id'],
    sample: (f) => ({ params: { user_id: f.subject.id } }),
  },
  'PUT /api/admin/panel/users/:user_id': {
    auth: 'admin',
    body: true,
    params: ['user_id'],
    sample: (f) => ({ params: { user_id: f.subject.id }, body: { full_name: 'Renamed In Panel' } }),
    cases: [
      invalid('an empty object', 'body', { full_name: undefined }),
      invalid('a reason alone', 'body', { full_name: undefined, reason: 'Nothing to change' }),
      // Checked against the stored user inside the change's transaction: the name stays too.
      invalid('a deactivation without a reason', 'body.reason', { is_active: false }),
      invalid('a promotion without a reason', 'body.reason', { admin_role: 'admin' }),
      ...(
        [
          ['null', null],
          ['as a number', 42],
          ['as an array', ['why']],
          ['empty', ''],
          ['blank', '   '],
          ['over 500 characters', 'r'.repeat(501)],
          ['over 500 code points of emoji', '🩺'.repeat(501)],
          ['with a newline', 'on\nleave'],
          ['with a NUL', 'on\u0000leave'],
          ['with an escape sequence', 'on\u001b[31m'],
          ['with a lone surrogate', 'on\ud800'],
        ] as const
      ).map(([what, reason]) =>
        invalid(`reason ${what}`, 'body.reason', { is_active: false, reason }),
      ),
      invalid('is_active "false"', 'body.is_active', { is_active: 'false', reason: 'Why' }),
      invalid('is_active null', 'body.is_active', { is_active: null }),
      invalid('admin_role "root"', 'body.admin_role', { admin_role: 'root', reason: 'Why' }),
      invalid('admin_role null', 'body.admin_role', { admin_role: null }),
      { name: "another user's email", status: 409, body: (f) => ({ email: f.caller.email }) },
      {
        name: 'the caller deactivating themselves',
        status: 409,
        params: (f) => ({ user_id: f.caller.id }),
        body: { is_active: false, reason: 'Leaving' },
      },
      {
        name: 'the caller demoting themselves',
        status: 409,
        params: (f) => ({ user_id: f.caller.id }),
        body: { admin_role: 'user', reason: 'Stepping down' },
      },
      unexpected('password', NEW_PASSWORD),
      unexpected('is_admin', true),
      unexpected('id', randomUUID()),
      ...badEmails('body.email'),
      ...badNames('body.full_name'),
    ],
  },
  'DELETE /api/admin/panel/users/:user_id': {
    auth: 'admin',
    params: ['user_id'],
    sample: (f) => ({ params: { user_id: f.subject.id } }),
    cases: [
      { name: 'the caller’s own account', status: 409, params: (f) => ({ user_id: f.caller.id }) },
    ],
  },
  'GET /api/admin/panel/users/:user_id/role-history': {
    auth: 'admin',
    params: ['user_id'],
    sample: (f) => ({ params: { user_id: f.subject.id } }),
  },
  'GET /api/admin/panel/users/:user_id/lock-reasons': {
    auth: 'admin',
    params: ['user_id'],
    sample: (f) => ({ params: { user_id: f.subject.id } }),
  },
  'GET /api/admin/panel/websocket-status': { auth: 'admin', sample: () => ({}) },
  'GET /api/admin/panel/metrics': { auth: 'admin', sample: () => ({}) },
  'GET /conversations': {
    auth: 'user',
    query: true,
    sample: () => ({ query: 'page=1&pageSize=20' }),
    cases: [
      ...(
        [
          ['page=0', 'page'],
          ['page=-1', 'page'],
          ['page=x', 'page'],
          ['page=1.5', 'page'],
          ['page=', 'page'],
          ['page=100001', 'page'],
          ['page=1&page=2', 'page'],
          [`page=${encodeURIComponent('1; DROP TABLE conversations')}`, 'page'],
          ['pageSize=0', 'pageSize'],
          ['pageSize=101', 'pageSize'],
          ['pageSize=-1', 'pageSize'],
          ['pageSize=x', 'pageSize'],
          ['archived=yes', 'archived'],
          ['archived=maybe', 'archived'],
          // The query coercion takes only "true" and "false" as booleans: not 1, 0 or null.
          ['archived=1', 'archived'],
          ['archived=0', 'archived'],
          ['archived=null', 'archived'],
          ['archived=', 'archived'],
          ['archived=TRUE', 'archived'],
          ['archived=true&archived=false', 'archived'],
          ['folderId=', 'folderId'],
          ['folderId=%20%20', 'folderId'],
          [`folderId=${'f'.repeat(129)}`, 'folderId'],
          ['folderId=a%00b', 'folderId'],
          ['folderId=a%0Ab', 'folderId'],
          ['page_size=5', 'page_size'],
          ['folder_id=x', 'folder_id'],
          ['sort=title', 'sort'],
          ['offset=0', 'offset'],
        ] as const
      ).map(([query, field]) => badQuery(query, field)),
    ],
  },
  'POST /conversations': {
    auth: 'user',
    body: true,
    sample: () => ({ body: { title: 'A new conversation', folder_id: 'cardiology' } }),
    // Without a title the conversation is untitled until its first chat question names it.
    cases: [
      invalid('a null title', 'body.title', { title: null }),
      {
        name: 'a valid title with an invalid folder_id',
        status: 422,
        fields: ['body.folder_id'],
        body: () => ({ title: 'Half written', folder_id: '' }),
      },
      unexpected('id', randomUUID()),
      unexpected('user_id', randomUUID()),
      unexpected('archived', true),
      unexpected('messageCount', 0),
      unexpected('folderId', 'cardiology'),
      ...badTitles(),
      ...badFolders(),
    ],
  },
  'GET /conversations/:conversation_id': {
    auth: 'user',
    params: ['conversation_id'],
    ofAnother: othersConversation,
    sample: (f) => ({ params: conversationParams(f) }),
  },
  'PUT /conversations/:conversation_id': {
    auth: 'user',
    body: true,
    params: ['conversation_id'],
    ofAnother: othersConversation,
    sample: (f) => ({ params: conversationParams(f), body: { title: 'Renamed conversation' } }),
    cases: [
      invalid('an empty object', 'body', { title: undefined }),
      invalid('archived "true"', 'body.archived', { archived: 'true' }),
      invalid('archived "false"', 'body.archived', { archived: 'false' }),
      invalid('archived 1', 'body.archived', { archived: 1 }),
      invalid('archived 0', 'body.archived', { archived: 0 }),
      invalid('archived null', 'body.archived', { archived: null }),
      {
        name: 'a valid title with archived "true"',
        status: 422,
        fields: ['body.archived'],
        body: () => ({ title: 'Half written', archived: 'true' }),
      },
      {
        name: 'a valid archived with an invalid title',
        status: 422,
        fields: ['body.title'],
        body: () => ({ title: '', archived: true }),
      },
      {
        name: 'a valid title with an invalid folder_id',
        status: 422,
        fields: ['body.folder_id'],
        body: () => ({ title: 'Half written', folder_id: 'f'.repeat(129) }),
      },
      invalid("another user's id as user_id", 'body.user_id', (f) => ({ user_id: f.subject.id })),
      unexpected('id', randomUUID()),
      unexpected('messageCount', 0),
      unexpected('updatedAt', '2020-01-01T00:00:00.000Z'),
      unexpected('folderId', 'cardiology'),
      ...badTitles(),
      ...badFolders(),
    ],
  },
  'DELETE /conversations/:conversation_id': {
    auth: 'user',
    params: ['conversation_id'],
    ofAnother: othersConversation,
    sample: (f) => ({ params: conversationParams(f) }),
  },
  'POST /conversations/:conversation_id/branches': {
    auth: 'user',
    body: true,
    params: ['conversation_id'],
    ofAnother: othersConversation,
    sample: (f) => ({
      params: conversationParams(f),
      body: { parent_message_id: first(f.conversation.messages), initial_message: 'Or else?' },
    }),
    cases: [
      missing('parent_message_id'),
      invalid('parent_message_id not a UUID', 'body.parent_message_id', {
        parent_message_id: 'not-a-uuid',
      }),
      invalid('parent_message_id as a number', 'body.parent_message_id', { parent_message_id: 1 }),
      invalid('parent_message_id null', 'body.parent_message_id', { parent_message_id: null }),
      invalid('parent_message_id "main"', 'body.parent_message_id', { parent_message_id: 'main' }),
      invalid('parent_message_id as a URN', 'body.parent_message_id', {
        parent_message_id: `urn:uuid:${randomUUID()}`,
      }),
      invalid('parent_message_id that looks like SQL', 'body.parent_message_id', {
        parent_message_id: SQL,
      }),
      {
        name: 'a valid parent_message_id with an invalid initial_message',
        status: 422,
        fields: ['body.initial_message'],
        body: (f) => ({ parent_message_id: first(f.conversation.messages), initial_message: '' }),
      },
      unexpected('branch_id', 'main'),
      unexpected('id', randomUUID()),
      unexpected('parentMessageId', randomUUID()),
      unknown('an unknown parent_message_id', {
        body: () => ({ parent_message_id: randomUUID() }),
      }),
      unknown('the conversation id as parent_message_id', {
        body: (f) => ({ parent_message_id: f.conversation.id }),
      }),
      unknown("a message of another user's conversation as parent_message_id", {
        body: (f) => ({ parent_message_id: first(f.subjectConversation.messages) }),
      }),
      unknown("a message of the caller's other conversation as parent_message_id", {
        body: (f) => ({ parent_message_id: first(f.otherConversation.messages) }),
      }),
      unknown("another user's conversation with a message of it as parent_message_id", {
        params: othersConversation,
        body: (f) => ({ parent_message_id: first(f.subjectConversation.messages) }),
      }),
      ...badMessages(),
    ],
  },
  'GET /conversations/:conversation_id/branches': {
    auth: 'user',
    params: ['conversation_id'],
    ofAnother: othersConversation,
    sample: (f) => ({ params: conversationParams(f) }),
  },
  'GET /conversations/:conversation_id/messages': {
    auth: 'user',
    params: ['conversation_id'],
    query: true,
    ofAnother: othersConversation,
    sample: (f) => ({ params: conversationParams(f), query: 'branch_id=main&limit=50' }),
    cases: [
      ...(
        [
          ['limit=0', 'limit'],
          ['limit=201', 'limit'],
          ['limit=-1', 'limit'],
          ['limit=x', 'limit'],
          ['limit=1.5', 'limit'],
          ['limit=', 'limit'],
          ['limit=5&limit=6', 'limit'],
          ['branch_id=', 'branch_id'],
          [`branch_id=${'b'.repeat(65)}`, 'branch_id'],
          ['branch_id=main&branch_id=main', 'branch_id'],
          ['before=not-a-uuid', 'before'],
          ['before=', 'before'],
          [`before=urn:uuid:${randomUUID()}`, 'before'],
          [`before=${encodeURIComponent(SQL)}`, 'before'],
          ['branchId=main', 'branchId'],
          ['offset=0', 'offset'],
        ] as const
      ).map(([query, field]) => badQuery(query, field)),
      unknown('an unknown branch_id', { query: 'branch_id=feature' }),
      unknown('an unknown UUID as branch_id', { query: () => `branch_id=${randomUUID()}` }),
      unknown('branch_id MAIN', { query: 'branch_id=MAIN' }),
      unknown('a branch_id that looks like SQL', { query: `branch_id=${encodeURIComponent(SQL)}` }),
      unknown('a branch_id of 64 characters', { query: `branch_id=${'b'.repeat(64)}` }),
      // Control characters are refused like in every other text field (PostgreSQL cannot even
      // take a NUL as a parameter).
      {
        name: 'a branch_id with a NUL',
        status: 422,
        fields: ['query.branch_id'],
        query: 'branch_id=a%00b',
      },
      {
        name: 'a branch_id of a NUL alone',
        status: 422,
        fields: ['query.branch_id'],
        query: 'branch_id=%00',
      },
      {
        name: 'a branch_id with a newline',
        status: 422,
        fields: ['query.branch_id'],
        query: 'branch_id=a%0Ab',
      },
      unknown('a branch_id of invalid UTF-8', { query: 'branch_id=%FF%ED%A0%80' }),
      unknown("a fork of another user's conversation as branch_id", {
        query: (f) => `branch_id=${forkOf(f.subjectConversation).id}`,
      }),
      unknown('an unknown before', { query: () => `before=${randomUUID()}` }),
      unknown("a message of the caller's other conversation as before", {
        query: (f) => `before=${first(f.otherConversation.messages)}`,
      }),
      unknown("a message of another user's conversation as before", {
        query: (f) => `before=${first(f.subjectConversation.messages)}`,
      }),
      unknown('a message of a fork, not on the main thread, as before', {
        query: (f) => `branch_id=main&before=${first(forkOf(f.conversation).messages)}`,
      }),
      unknown("a message after the fork's start, not on its thread, as before", {
        query: (f) =>
          `branch_id=${forkOf(f.conversation).id}&before=${f.conversation.messages[1] ?? ''}`,
      }),
    ],
  },
  'GET /api/admin/kb/documents': {
    auth: 'admin',
    query: true,
    kb: true,
    sample: () => ({ query: 'offset=0&limit=5&status=failed' }),
    cases: (
      [
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        ['limit=-1', 'limit'],
        ['limit=x', 'limit'],
        ['limit=1.5', 'limit'],
        ['limit=', 'limit'],
        ['limit=5&limit=6', 'limit'],
        ['offset=-1', 'offset'],
        ['offset=x', 'offset'],
        ['offset=1000001', 'offset'],
        ['status=done', 'status'],
        ['status=', 'status'],
        ['status=INDEXED', 'status'],
        ['status=superseded', 'status'],
        ['status=indexed&status=failed', 'status'],
        [`status=${encodeURIComponent(SQL)}`, 'status'],
        ['state=failed', 'state'],
        ['page=2', 'page'],
      ] as const
    ).map(([query, field]) => badQuery(query, field)),
  },
  'POST /api/admin/kb/documents': {
    auth: 'admin',
    multipart: { form: uploadForm, required: ['body.file', 'body.title', 'body.category'] },
    kb: true,
    sample: () => ({ form: uploadForm() }),
    cases: [
      upload('no file', 422, (parts) => parts.filter((p) => p.name !== 'file'), ['body.file']),
      upload('no title', 422, withField('title', undefined), ['body.title']),
      upload('no category', 422, withField('category', undefined), ['body.category']),
      upload(
        'no title and no category',
        422,
        fileFirst((parts) => parts.filter((p) => p.name === 'file')),
        ['body.title', 'body.category'],
      ),
      upload('an empty file', 422, withFile(Buffer.alloc(0)), ['body.file']),
      upload('an empty file sent first', 422, fileFirst(withFile(Buffer.alloc(0))), ['body.file']),
      upload('PNG bytes', 415, withFile(PNG)),
      upload('PNG bytes sent before the fields', 415, fileFirst(withFile(PNG))),
      upload('PNG bytes named .txt and declared text/plain', 415, (parts) =>
        parts.map((p) => (p.name === 'file' ? filePart(PNG, 'notes.txt', 'text/plain') : p)),
      ),
      upload('PNG bytes named .pdf and declared application/pdf', 415, (parts) =>
        parts.map((p) => (p.name === 'file' ? filePart(PNG, 'guide.pdf', 'application/pdf') : p)),
      ),
      upload('invalid UTF-8', 415, withFile(Buffer.from([0x61, 0x62, 0xff, 0xfe, 0x63]))),
      upload('UTF-8 ending inside a character', 415, withFile(Buffer.from([0x61, 0xe2, 0x82]))),
      upload('an encoded surrogate (CESU-8)', 415, withFile(Buffer.from([0x61, 0xed, 0xa0, 0x80]))),
      upload('a NUL in the text', 415, withFile('text with a \u0000 NUL')),
      upload(
        'a NUL after 256 KiB of text',
        415,
        fileFirst(withFile(Buffer.concat([Buffer.alloc(256 * 1024, 0x61), Buffer.from([0])]))),
      ),
      upload(
        'a file over 50 MB',
        413,
        fileFirst(withFile(Buffer.alloc(MAX_UPLOAD_BYTES + 1, 0x61))),
      ),
      ...badFormLines('title', 200),
      ...badFormLines('category', 100),
      ...(
        [
          ['doc_key in capitals', 'Heart-Failure'],
          ['doc_key with a space', 'heart failure'],
          ['doc_key that looks like SQL', SQL],
          ['doc_key with a slash', 'cardiology/heart'],
          ['doc_key starting with a hyphen', '-heart'],
          ['doc_key ending with a dot', 'heart.'],
          ['empty doc_key', ''],
          ['doc_key over 128 characters', 'k'.repeat(129)],
          ['doc_key with a NUL', 'heart\u0000failure'],
          ['doc_key with a non-ASCII letter', 'cœur'],
        ] as const
      ).flatMap(([what, value]) => badField(what, 'doc_key', value)),
      upload(
        'a title without letters or digits and no doc_key',
        422,
        fileFirst(withField('title', '!!! ***')),
        ['body.doc_key'],
      ),
      upload('an unknown field', 422, withField('description', 'more'), ['body.description']),
      upload('an unknown field after the file', 422, fileFirst(withField('uploaded_by', 'x')), [
        'body.uploaded_by',
      ]),
      upload('an unknown field named like a column', 422, withField('status', 'indexed'), [
        'body.status',
      ]),
      upload('a __proto__ field', 422, fileFirst(withField('__proto__', 'x')), ['body']),
      upload(
        'the file under another name',
        422,
        (parts) => parts.map((p) => (p.name === 'file' ? { ...p, name: 'document' } : p)),
        ['body.document'],
      ),
      upload(
        'the file as a plain field',
        422,
        (parts) => parts.map((p) => (p.name === 'file' ? { name: 'file', value: 'just text' } : p)),
        ['body.file'],
      ),
      upload(
        'a file as the title',
        422,
        (parts) => [...parts.filter((p) => p.name !== 'title'), filePart('Title', 'title.txt')],
        ['body'],
      ),
      upload('two files', 422, (parts) => [...parts, filePart('A second file.\n', 'second.txt')], [
        'body',
      ]),
      upload(
        'two files, the second invalid',
        422,
        fileFirst((parts) => [...parts, filePart(PNG, 'second.png', 'image/png')]),
        ['body'],
      ),
      // A repeated field is refused rather than the last one silently winning.
      upload(
        'the title twice',
        422,
        (parts) => [...parts, { name: 'title', value: 'Another title' }],
        ['body.title'],
      ),
    ],
  },
  'GET /api/admin/kb/documents/:document_id': {
    auth: 'admin',
    params: ['document_id'],
    kb: true,
    sample: (f) => ({ params: { document_id: kbOf(f).current.id } }),
    cases: [
      unknown('a job id as document_id', {
        params: (f) => ({ document_id: kbOf(f).current.jobId }),
      }),
      unknown("the caller's id as document_id", {
        params: (f) => ({ document_id: f.caller.id }),
      }),
    ],
  },
  'DELETE /api/admin/kb/documents/:document_id': {
    auth: 'admin',
    params: ['document_id'],
    kb: true,
    sample: (f) => ({ params: { document_id: kbOf(f).current.id } }),
    cases: [
      unknown('a job id as document_id', {
        params: (f) => ({ document_id: kbOf(f).current.jobId }),
      }),
    ],
  },
  'POST /api/admin/kb/documents/:document_id/reindex': {
    auth: 'admin',
    params: ['document_id'],
    kb: true,
    sample: (f) => ({ params: { document_id: kbOf(f).current.id } }),
    cases: [
      {
        name: 'a superseded version',
        status: 409,
        message: /superseded/,
        params: (f) => ({ document_id: kbOf(f).superseded.id }),
      },
      unknown('a job id as document_id', {
        params: (f) => ({ document_id: kbOf(f).current.jobId }),
      }),
    ],
  },
  'GET /api/admin/kb/jobs': {
    auth: 'admin',
    query: true,
    kb: true,
    sample: (f) => ({ query: `offset=0&limit=5&state=failed&doc_key=${kbOf(f).docKey}` }),
    cases: (
      [
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        ['limit=x', 'limit'],
        ['offset=-1', 'offset'],
        ['offset=x', 'offset'],
        ['state=bogus', 'state'],
        ['state=', 'state'],
        ['state=FAILED', 'state'],
        ['state=indexed', 'state'],
        ['state=failed&state=pending', 'state'],
        ['doc_key=Heart-Failure', 'doc_key'],
        ['doc_key=heart%20failure', 'doc_key'],
        [`doc_key=${encodeURIComponent(SQL)}`, 'doc_key'],
        ['doc_key=', 'doc_key'],
        ['doc_key=-heart', 'doc_key'],
        [`doc_key=${'k'.repeat(129)}`, 'doc_key'],
        ['doc_key=heart%00failure', 'doc_key'],
        ['doc_key=a&doc_key=b', 'doc_key'],
        ['status=failed', 'status'],
        ['document_id=x', 'document_id'],
      ] as const
    ).map(([query, field]) => badQuery(query, field)),
  },
  'GET /api/admin/kb/jobs/:job_id': {
    auth: 'admin',
    params: ['job_id'],
    kb: true,
    sample: (f) => ({ params: { job_id: kbOf(f).current.jobId } }),
    cases: [
      unknown('a document id as job_id', { params: (f) => ({ job_id: kbOf(f).current.id }) }),
    ],
  },
  'POST /api/admin/kb/jobs/:job_id/retry': {
    auth: 'admin',
    params: ['job_id'],
    kb: true,
    sample: (f) => ({ params: { job_id: kbOf(f).current.jobId } }),
    cases: [
      {
        name: 'a pending job',
        status: 409,
        message: /pending/,
        params: (f) => ({ job_id: kbOf(f).pending.jobId }),
      },
      {
        name: 'a superseded job',
        status: 409,
        message: /superseded/,
        params: (f) => ({ job_id: kbOf(f).superseded.jobId }),
      },
      unknown('a document id as job_id', { params: (f) => ({ job_id: kbOf(f).current.id }) }),
    ],
  },
  'GET /api/admin/kb/search': {
    auth: 'admin',
    query: true,
    sample: () => ({ query: 'q=loop%20diuretics%20in%20HF&limit=5&category=cardiology' }),
    cases: [
      ...(
        [
          ['limit=5', 'q'],
          ['q=', 'q'],
          ['q=%20%20%20', 'q'],
          ['q=%09%0A%0D', 'q'],
          [`q=${'a'.repeat(1001)}`, 'q'],
          ['q=a&q=b', 'q'],
          ['q=heart&limit=0', 'limit'],
          ['q=heart&limit=51', 'limit'],
          ['q=heart&limit=-1', 'limit'],
          ['q=heart&limit=x', 'limit'],
          ['q=heart&limit=1.5', 'limit'],
          ['q=heart&category=', 'category'],
          ['q=heart&category=%20%20', 'category'],
          [`q=heart&category=${'c'.repeat(101)}`, 'category'],
          ['q=heart&category=a%0Ab', 'category'],
          ['q=heart&offset=0', 'offset'],
          ['q=heart&doc_key=x', 'doc_key'],
        ] as const
      ).map(([query, field]) => badQuery(query, field)),
      // Control characters are refused like in every other text field (PostgreSQL cannot even
      // take a NUL as a parameter).
      badQuery('q=heart%00failure', 'q'),
      badQuery('q=%00', 'q'),
      badQuery('q=heart&category=a%00b', 'category'),
      badQuery('q=heart&category=a%1Bb', 'category'),
      badQuery('q=heart&category=%1B', 'category'),
      badQuery('q=heart&category=%C2%85', 'category'),
    ],
  },
  // Feedback (spec 4.9): rating 1 to 5 (DECISIONS 7), a closed list of categories, comments of
  // at most 4,000 characters where tabs and line breaks are allowed.
  'POST /api/voice/session': {
    auth: 'user',
    body: true,
    sample: () => ({ body: { barge_in: true, language: 'en' } }),
    cases: [
      unexpected('session_id', randomUUID()),
      unexpected('user_id', randomUUID()),
      invalid('conversation_id not a UUID', 'body.conversation_id', { conversation_id: 'abc' }),
      {
        name: "another user's conversation",
        status: 404,
        body: othersConversation,
      },
      invalid('voice with a space', 'body.voice', { voice: 'slt rms' }),
      invalid('voice over 64 characters', 'body.voice', { voice: 'a'.repeat(65) }),
      invalid('language not a tag', 'body.language', { language: 'english please' }),
      invalid('barge_in "yes"', 'body.barge_in', { barge_in: 'yes' }),
      invalid('turn_detection null', 'body.turn_detection', { turn_detection: null }),
      invalid('silence_ms 50', 'body.turn_detection.silence_ms', {
        turn_detection: { silence_ms: 50 },
      }),
      invalid('min_speech_ms "200"', 'body.turn_detection.min_speech_ms', {
        turn_detection: { min_speech_ms: '200' },
      }),
      invalid('threshold 2', 'body.turn_detection.threshold', { turn_detection: { threshold: 2 } }),
      invalid('an unknown turn_detection field', 'body.turn_detection.mode', {
        turn_detection: { mode: 'vad' },
      }),
    ],
  },
  'POST /api/voice/audio': {
    auth: 'user',
    multipart: { form: silenceForm, required: ['body.file'] },
    sample: () => ({ form: silenceForm() }),
    cases: [
      upload('no file', 422, (parts) => parts.filter((p) => p.name !== 'file'), ['body.file']),
      upload('an empty file', 422, withFile(Buffer.alloc(0)), ['body.file']),
      upload('an odd number of PCM bytes', 422, withFile(Buffer.alloc(3201)), ['body.file']),
      upload('PCM longer than 30 s', 422, withFile(Buffer.alloc(32_000 * 31)), ['body.file']),
      upload('a truncated WAV header', 422, withFile(Buffer.from('RIFF\u0000\u0000WAVEfmt ')), [
        'body.file',
      ]),
      upload('a WAV of 0 channels', 422, withFile(wavHeader({ channels: 0 })), ['body.file']),
      upload('a WAV whose data outruns the file', 422, withFile(wavHeader({ dataBytes: 1e6 })), [
        'body.file',
      ]),
      upload('an unknown field', 422, withField('model', 'big'), ['body.model']),
      upload('conversation_id not a UUID', 422, withField('conversation_id', 'abc'), [
        'body.conversation_id',
      ]),
      upload('language not a tag', 422, withField('language', 'english please'), ['body.language']),
      upload('a form over 16 MB', 413, fileFirst(withFile(Buffer.alloc(17 * 1024 * 1024)))),
    ],
  },
  'GET /api/admin/cache/stats': { auth: 'admin', sample: () => ({}) },
  'POST /api/admin/cache/clear': { auth: 'admin', sample: () => ({}) },
  'POST /api/admin/cache/invalidate': {
    auth: 'admin',
    body: true,
    sample: () => ({ body: { pattern: 'user:*' } }),
    cases: [
      missing('pattern'),
      unexpected('namespace', 'other:'),
      invalid('pattern empty', 'body.pattern', { pattern: '' }),
      invalid('pattern over 256 characters', 'body.pattern', { pattern: '*'.repeat(257) }),
      invalid('pattern with an unclosed class', 'body.pattern', { pattern: 'user:[0-9' }),
      invalid('pattern as a number', 'body.pattern', { pattern: 42 }),
      invalid('pattern null', 'body.pattern', { pattern: null }),
      invalid('pattern as a list', 'body.pattern', { pattern: ['user:*'] }),
    ],
  },
  'POST /api/feedback': {
    auth: 'user',
    body: true,
    sample: () => ({
      body: { session_id: 'voice-1', rating: 4, category: 'voice_quality', comments: 'Clear' },
    }),
    cases: [
      missing('session_id'),
      missing('rating'),
      missing('category'),
      missing('session_id', 'rating', 'category'),
      unexpected('id', randomUUID()),
      unexpected('user_id', randomUUID()),
      unexpected('created_at', '2026-01-01T00:00:00.000Z'),
      ...(
        [
          ['rating 0', 0],
          ['rating 6', 6],
          ['rating -1', -1],
          ['rating 2.5', 2.5],
          ['rating "5"', '5'],
          ['rating null', null],
          ['rating true', true],
          ['rating as an array', [5]],
          ['rating 1e300', 1e300],
        ] as const
      ).map(([name, rating]) => invalid(name, 'body.rating', { rating })),
      ...(
        [
          ['category unknown', 'sound'],
          ['category in capitals', 'VOICE_QUALITY'],
          ['category empty', ''],
          ['category as a number', 5],
          ['category null', null],
          ['category that looks like SQL', SQL],
        ] as const
      ).map(([name, category]) => invalid(name, 'body.category', { category })),
      invalid('session_id null', 'body.session_id', { session_id: null }),
      ...badLines('session_id', 128).map(([name, session_id]) =>
        invalid(name, 'body.session_id', { session_id }),
      ),
      ...(
        [
          ['comments as a number', 12],
          ['comments as an object', { text: 'a' }],
          ['comments over 4000 characters', 'a'.repeat(4001)],
          ['comments over 4000 code points of emoji', '🩺'.repeat(4001)],
          ['comments with a NUL', 'a\u0000b'],
          ['comments with an escape sequence', 'a\u001b[31m'],
          ['comments with DEL', 'a\u007f'],
          ['comments with a lone surrogate', 'a\ud800'],
        ] as const
      ).map(([name, comments]) => invalid(name, 'body.comments', { comments })),
    ],
  },
  'GET /api/admin/feedback/summary': {
    auth: 'admin',
    query: true,
    sample: () => ({ query: 'days=30' }),
    cases: (
      [
        ['days=0', 'days'],
        ['days=366', 'days'],
        ['days=-1', 'days'],
        ['days=1.5', 'days'],
        ['days=x', 'days'],
        ['days=', 'days'],
        ['days=1&days=2', 'days'],
        ['format=csv', 'format'],
      ] as const
    ).map(([query, field]) => badQuery(query, field)),
  },
  'GET /api/admin/feedback/export': {
    auth: 'admin',
    query: true,
    sample: () => ({ query: 'format=csv&days=30' }),
    cases: (
      [
        ['format=json', 'format'],
        ['format=CSV', 'format'],
        ['format=', 'format'],
        ['format=csv&format=csv', 'format'],
        ['days=0', 'days'],
        ['days=366', 'days'],
        ['days=x', 'days'],
        ['limit=10', 'limit'],
      ] as const
    ).map(([query, field]) => badQuery(query, field)),
  },
  // Audit log (spec 4.4, DECISIONS 7): filters action (exact or `x.*`), user_id, since, until.
  'GET /api/admin/panel/audit-logs': {
    auth: 'admin',
    query: true,
    sample: () => ({ query: 'page=1&limit=50&action=auth.*' }),
    cases: (
      [
        ['page=0', 'page'],
        ['page=x', 'page'],
        ['page=1&page=2', 'page'],
        ['limit=0', 'limit'],
        ['limit=201', 'limit'],
        ['limit=1.5', 'limit'],
        ['action=', 'action'],
        ['action=Auth.login', 'action'],
        ['action=auth.', 'action'],
        ['action=.*', 'action'],
        ['action=auth.**', 'action'],
        [`action=${encodeURIComponent(SQL)}`, 'action'],
        [`action=${'a'.repeat(101)}`, 'action'],
        ['user_id=not-a-uuid', 'user_id'],
        [`user_id=${encodeURIComponent(SQL)}`, 'user_id'],
        ['since=yesterday', 'since'],
        ['until=2026-11-01', 'until'],
        ['since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z', 'since'],
        ['offset=10', 'offset'],
      ] as const
    ).map(([query, field]) => badQuery(query, field)),
  },
  'GET /api/admin/panel/audit-logs/verify': { auth: 'admin', sample: () => ({}) },
  'GET /api/admin/panel/audit-logs/export': {
    auth: 'admin',
    query: true,
    sample: () => ({ query: 'format=csv&action=auth.login' }),
    cases: (
      [
        ['format=json', 'format'],
        ['format=CSV', 'format'],
        ['format=', 'format'],
        ['format=csv&format=csv', 'format'],
        ['action=auth.*.x', 'action'],
        ['user_id=1', 'user_id'],
        ['since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z', 'since'],
        ['page=1', 'page'],
        ['limit=10', 'limit'],
      ] as const
    ).map(([query, field]) => badQuery(query, field)),
  },
  // Feature flags (spec 4.7, DECISIONS 7): names `^[a-z][a-z0-9_.-]{1,63}$`, rollout 0 to 100.
  'GET /api/feature-flags': { auth: 'user', sample: () => ({}) },
  'GET /api/admin/feature-flags': { auth: 'admin', sample: () => ({}) },
  'POST /api/admin/feature-flags': {
    auth: 'admin',
    body: true,
    sample: () => ({
      body: {
        name: `bad.input.${randomBytes(4).toString('hex')}`,
        enabled: true,
        description: 'A flag',
        rollout_percentage: 50,
      },
    }),
    cases: [
      missing('name'),
      { name: 'a taken name', status: 409, body: (f) => ({ name: f.flag }) },
      ...badFlagNames().map(([what, name]) => invalid(`name ${what}`, 'body.name', { name })),
      ...badFlagFields(),
      unexpected('created_at', '2026-01-01T00:00:00.000Z'),
      unexpected('updated_at', '2026-01-01T00:00:00.000Z'),
    ],
  },
  'GET /api/admin/feature-flags/:flag_name': {
    auth: 'admin',
    params: ['flag_name'],
    sample: (f) => ({ params: { flag_name: f.flag } }),
  },
  'PATCH /api/admin/feature-flags/:flag_name': {
    auth: 'admin',
    body: true,
    params: ['flag_name'],
    sample: (f) => ({ params: { flag_name: f.flag }, body: { rollout_percentage: 30 } }),
    cases: [
      invalid('an empty object', 'body', { rollout_percentage: undefined }),
      ...badFlagFields(),
      unexpected('name', 'renamed.flag'),
      unexpected('created_at', '2026-01-01T00:00:00.000Z'),
    ],
  },
  'DELETE /api/admin/feature-flags/:flag_name': {
    auth: 'admin',
    params: ['flag_name'],
    sample: (f) => ({ params: { flag_name: f.flag } }),
  },
  'POST /api/admin/feature-flags/:flag_name/toggle': {
    auth: 'admin',
    params: ['flag_name'],
    sample: (f) => ({ params: { flag_name: f.flag } }),
  },
};

const ERROR_CODE: Record<number, string> = {
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'VALIDATION_ERROR',
};

/** Tokens that were valid once, per role; filled before the tests run. */
const dead: Record<'loggedOut' | 'passwordChanged', Record<'user' | 'admin', string>> & {
  deletedAccount: string;
} = {
  loggedOut: { user: '', admin: '' },
  passwordChanged: { user: '', admin: '' },
  deletedAccount: '',
};

/** A well-formed access token for `sub`, signed with a key the service does not have. */
function forged(sub: string): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const iat = Math.floor(Date.now() / 1000);
  const claims = { sub, jti: randomUUID(), type: 'access', fam: randomUUID(), iat, exp: iat + 900 };
  const signed = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
  const signature = createHmac('sha256', 'a key the service never saw').update(signed);
  return `${signed}.${signature.digest('base64url')}`;
}

/** Token cases shared by every route that needs one: the header, and why the token is refused. */
function tokenCases(role: 'user' | 'admin'): Case[] {
  const headers: [name: string, header: (f: Fixtures) => string, message: RegExp][] = [
    ['a token revoked by logout', () => `Bearer ${dead.loggedOut[role]}`, /revoked/],
    [
      'a token revoked by a password change',
      () => `Bearer ${dead.passwordChanged[role]}`,
      /revoked/,
    ],
    [
      'a token of a deleted account',
      () => `Bearer ${dead.deletedAccount}`,
      /revoked|no longer exists/,
    ],
    ['a refresh token as the access token', (f) => `Bearer ${f.caller.refresh}`, /invalid/i],
    ['a token signed with another key', (f) => `Bearer ${forged(f.caller.id)}`, /invalid/i],
    ['a tampered token', (f) => `Bearer ${tampered(f.caller.access)}`, /invalid/i],
    ['the word Bearer alone', () => 'Bearer', /missing or malformed/i],
    ['Basic credentials', () => 'Basic dXNlcjpwYXNzd29yZA==', /missing or malformed/i],
    ['a token without the scheme', (f) => f.caller.access, /missing or malformed/i],
    ['a 5000-character token', () => `Bearer ${'a'.repeat(5000)}`, /missing or malformed/i],
  ];
  return [
    { name: 'an expired access token', status: 401, message: /expired/, clockMs: 901_000 },
    ...headers.map(([name, auth, message]) => ({ name, status: 401, auth, message })),
  ];
}

/**
 * The token with one character of its signature changed, well before the end: the last character
 * of a base64url signature carries padding bits, so replacing the tail can leave the signature as
 * it was (then the "tampered" token is valid).
 */
function tampered(token: string): string {
  const at = token.length - 10;
  const swapped = token[at] === 'A' ? 'B' : 'A';
  return token.slice(0, at) + swapped + token.slice(at + 1);
}

/** What the tests read of a conversation in a response. */
interface ConversationDto {
  id: string;
  title: string;
  folderId: string | null;
}

const JSON_TYPE = 'application/json';
const OVERSIZE = JSON.stringify({ padding: 'x'.repeat(JSON_BODY_LIMIT) });

/** A case that sends these bytes as the body; a 422 names the body as a whole. */
const raw = (name: string, status: number, payload: string | Buffer, type?: string): Case => ({
  name,
  status,
  ...(status === 422 ? { fields: ['body'] } : {}),
  raw: type === undefined ? { payload } : { payload, type },
});

/** Body cases shared by every route that takes a JSON body. */
const bodyCases = (): Case[] => [
  raw('malformed JSON', 422, '{"email":', JSON_TYPE),
  raw('an empty JSON body', 422, '', JSON_TYPE),
  raw('a JSON array', 422, '[{"a":1}]', JSON_TYPE),
  raw('a JSON string', 422, '"hello"', JSON_TYPE),
  raw('a JSON number', 422, '42', JSON_TYPE),
  raw('JSON null', 422, 'null', JSON_TYPE),
  raw('a __proto__ key', 422, '{"__proto__":{"is_admin":true}}', JSON_TYPE),
  raw('text/plain', 415, '{}', 'text/plain'),
  raw('a form', 415, 'a=b', 'application/x-www-form-urlencoded'),
  raw('XML', 415, '<a/>', 'application/xml'),
  raw('no content type', 415, Buffer.from('{"a":1}')),
  unexpected('unexpected_field', 1),
  {
    name: 'a body over 1 MiB',
    status: 413,
    body: () => ({ padding: 'x'.repeat(JSON_BODY_LIMIT) }),
  },
];

/**
 * Cases for a multipart route, in place of the JSON body cases: `form` is a valid form of the
 * route, `required` the fields an empty form lacks.
 */
const multipartCases = (form: FormPart[], required: string[]): Case[] => {
  const valid = multipart(form);
  // The file last, so that cutting the body's end cuts inside it.
  const fileLast = [
    ...form.filter((p) => p.name !== 'file'),
    ...form.filter((p) => p.name === 'file'),
  ];
  const cut = multipart(fileLast);
  return [
    // Anything but multipart is 415, a JSON object included.
    raw('a JSON body', 415, '{"title":"A","category":"b"}', JSON_TYPE),
    raw('text/plain', 415, 'hello', 'text/plain'),
    raw('a form', 415, 'title=A&category=b', 'application/x-www-form-urlencoded'),
    raw('no content type', 415, valid),
    raw('multipart/mixed', 415, valid, `multipart/mixed; boundary=${BOUNDARY}`),
    // The parser's own errors (no boundary, unexpected end of data) are a 422 on the body.
    raw('multipart without a boundary', 422, valid, 'multipart/form-data'),
    raw('a boundary other than the body’s', 422, valid, 'multipart/form-data; boundary=other-one'),
    raw('a body cut off inside the file', 422, cut.subarray(0, cut.length - 30), MULTIPART_TYPE),
    raw(
      'a body cut off before the closing boundary',
      422,
      cut.subarray(0, cut.length - 12),
      MULTIPART_TYPE,
    ),
    raw('random bytes as multipart', 422, randomBytes(2048), MULTIPART_TYPE),
    {
      name: 'an empty multipart body',
      status: 422,
      fields: required,
      raw: { payload: '', type: MULTIPART_TYPE },
    },
    {
      name: 'a multipart body without parts',
      status: 422,
      fields: required,
      raw: { payload: `--${BOUNDARY}--\r\n`, type: MULTIPART_TYPE },
    },
  ];
};

/** Cases shared by every route with a method that could carry a body but takes none. */
const noBodyCases = (): Case[] => [
  raw('an unexpected body', 422, '{"a":1}', JSON_TYPE),
  raw('an unexpected text body', 415, 'hello', 'text/plain'),
  raw('a body over 1 MiB', 413, OVERSIZE, JSON_TYPE),
];

/** Names a feature flag cannot have: [what, value]. */
function badFlagNames(): [string, unknown][] {
  return [
    ['in capitals', 'New_UI'],
    ['with a leading digit', '1flag'],
    ['with a leading dot', '.flag'],
    ['of one character', 'a'],
    ['over 64 characters', `a${'b'.repeat(64)}`],
    ['with a space', 'new ui'],
    ['with a slash', 'new/ui'],
    ['with a non-ASCII letter', 'névé'],
    ['that looks like SQL', SQL],
    ['with a NUL', 'a\u0000b'],
    ['empty', ''],
    ['as a number', 42],
    ['null', null],
  ];
}

/** Bad `enabled`, `rollout_percentage` and `description` values, on create and on update. */
function badFlagFields(): Case[] {
  const values: [field: string, what: string, value: unknown][] = [
    ['rollout_percentage', '-1', -1],
    ['rollout_percentage', '101', 101],
    ['rollout_percentage', '1.5', 1.5],
    ['rollout_percentage', '"50"', '50'],
    ['rollout_percentage', 'null', null],
    ['rollout_percentage', '1e300', 1e300],
    ['enabled', '"true"', 'true'],
    ['enabled', '1', 1],
    ['enabled', 'null', null],
    ['description', 'over 500 characters', 'd'.repeat(501)],
    ['description', 'over 500 code points of emoji', '🩺'.repeat(501)],
    ['description', 'with a NUL', 'a\u0000b'],
    ['description', 'with an escape sequence', 'a\u001b[31m'],
    ['description', 'with a lone surrogate', 'a\ud800'],
    ['description', 'as a number', 5],
    ['description', 'null', null],
  ];
  return values.map(([field, what, value]) =>
    invalid(`${field} ${what}`, `body.${field}`, { [field]: value }),
  );
}

/** Cases shared by every route with a flag name in its path: names the pattern refuses, unknown. */
function flagNameCases(param: string): Case[] {
  const bad = [
    'Bad',
    '1abc',
    'x',
    `a${'b'.repeat(64)}`,
    'a%20b',
    'a%00b',
    encodeURIComponent(SQL),
    encodeURIComponent('été'),
    'a.b%2Fc',
  ];
  return [
    ...bad.map((value) => ({
      name: `${param} ${decodeURIComponent(value)}`,
      status: 422,
      fields: [`params.${param}`],
      params: { [param]: value },
    })),
    { name: `an unknown ${param}`, status: 404, params: { [param]: 'no.such.flag' } },
  ];
}

/** Cases shared by every route with a UUID in its path. */
function paramCases(param: string): Case[] {
  if (param === 'flag_name') return flagNameCases(param);
  const id = '2b0a2f4e-5d1c-4e8a-9b3f-0c6d7e8f9a1b';
  const bad = [
    'not-a-uuid',
    '12345',
    encodeURIComponent(SQL),
    `urn:uuid:${id}`,
    `${id}x`,
    id.replace(/-/g, ''),
    `%7B${id}%7D`,
  ];
  return [
    ...bad.map((value) => ({
      name: `${param} ${decodeURIComponent(value)}`,
      status: 422,
      fields: [`params.${param}`],
      params: { [param]: value },
    })),
    { name: `an unknown ${param}`, status: 404, params: { [param]: randomUUID() } },
    {
      name: `the nil UUID as ${param}`,
      status: 404,
      params: { [param]: '00000000-0000-0000-0000-000000000000' },
    },
  ];
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function casesFor(key: string, inputs: RouteInputs): Case[] {
  const [method = ''] = key.split(' ');
  return [
    ...(inputs.cases ?? []),
    ...(inputs.auth === 'none' ? [] : tokenCases(inputs.auth)),
    ...(inputs.body
      ? bodyCases()
      : inputs.multipart
        ? multipartCases(inputs.multipart.form(), inputs.multipart.required)
        : BODY_METHODS.has(method)
          ? noBodyCases()
          : []),
    ...(inputs.params ?? []).flatMap(paramCases),
    {
      name: 'an unknown query parameter',
      status: 422,
      fields: ['query.unexpected'],
      extraQuery: 'unexpected=1',
    },
  ];
}

/** The error envelope, with field errors for validation failures and nothing that leaks internals. */
function expectError(
  res: { statusCode: number; body: string; headers: Record<string, unknown> },
  status: number,
  fields?: string[],
) {
  const err = errorOf(res, status);
  expect(err.code).toBe(ERROR_CODE[status]);
  expect(err.message).toMatch(/\w/);
  expect(res.body).not.toMatch(/node_modules|\.ts:\d|\bat \w+ \(|postgres|select |insert /i);
  if (status !== 422) return err;
  const details = err.details as { field: string; message: string }[];
  expect(Array.isArray(details), res.body).toBe(true);
  expect(details.length).toBeGreaterThan(0);
  for (const d of details) {
    expect(Object.keys(d).sort()).toEqual(['field', 'message']);
    expect(d.field).toMatch(/^(body|query|params)(\.[A-Za-z0-9_]+)*$/);
    expect(d.message).toMatch(/\w/);
  }
  if (fields !== undefined) {
    expect([...new Set(details.map((d) => d.field))].sort(), res.body).toEqual([...fields].sort());
  }
  return err;
}

describe('bad input (PostgreSQL + Redis)', () => {
  let t: TestApp;
  let clockOffset = 0;
  beforeAll(async () => {
    // No indexing worker: the knowledge base's rows change only by the requests under test.
    t = await createTestApp({
      now: () => new Date(Date.now() + clockOffset),
      env: { KB_WORKER_ENABLED: 'false' },
    });
    const [loggedOutUser, loggedOutAdmin, changedUser, changedAdmin, deleted] = await Promise.all([
      createUser(t.app, t.deps),
      createUser(t.app, t.deps, { admin: true }),
      createUser(t.app, t.deps),
      createUser(t.app, t.deps, { admin: true }),
      createUser(t.app, t.deps),
    ]);
    for (const u of [loggedOutUser, loggedOutAdmin]) {
      dataOf(await call('POST', '/api/auth/logout', u.access));
    }
    for (const u of [changedUser, changedAdmin]) {
      const payload = { old_password: u.password, new_password: NEW_PASSWORD };
      dataOf(await call('POST', '/api/users/me/change-password', u.access, payload));
    }
    dataOf(await call('DELETE', '/api/users/me', deleted.access));
    dead.loggedOut = { user: loggedOutUser.access, admin: loggedOutAdmin.access };
    dead.passwordChanged = { user: changedUser.access, admin: changedAdmin.access };
    dead.deletedAccount = deleted.access;
  });
  afterAll(() => t.close());

  function call(method: Method, url: string, token?: string, payload?: Body) {
    return t.app.inject({
      method,
      url,
      headers: token === undefined ? {} : bearer(token),
      ...(payload === undefined ? {} : { payload }),
    });
  }

  /** A conversation of `owner` with `count` messages on `main` and, if `fork`, a fork after the first. */
  async function conversationOf(
    owner: TestUser,
    count: number,
    fork: boolean,
  ): Promise<StoredConversation> {
    const { id } = await t.deps.conversations.create(owner.id, { title: 'Fixture conversation' });
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const role = i % 2 === 0 ? 'user' : 'assistant';
      const { message } = await t.deps.messages.append(owner.id, id, {
        role,
        content: `${role} message ${String(i)}`,
      });
      ids.push(message.id);
    }
    const forks = [];
    if (fork) {
      const made = await t.deps.messages.fork(owner.id, id, first(ids), 'A fork');
      forks.push({ id: made.branch.id, messages: made.message === null ? [] : [made.message.id] });
    }
    return { ownerId: owner.id, id, messages: ids, forks };
  }

  const kbUpload = (by: TestUser, docKey: string, text: string): Promise<StoredDocument> =>
    recordUpload(t.deps, by, docKey, text);

  /** Two versions of a doc_key (the current one failed indexing) and another pending document. */
  async function kbFixtures(by: TestUser): Promise<KbFixtures> {
    const db = t.deps.database.db;
    const docKey = `bad-input-${randomBytes(5).toString('hex')}`;
    const superseded = await kbUpload(by, docKey, `The first version of ${docKey}.`);
    const current = await kbUpload(by, docKey, `The second version of ${docKey}.`);
    const pending = await kbUpload(by, `${docKey}-other`, `Another document, ${docKey}.`);
    await jobsRepo.update(db, current.jobId, {
      state: 'failed',
      retryCount: 3,
      finishedAt: new Date(),
      errorDetails: { message: 'fixture failure' },
    });
    await documentsRepo.update(db, current.id, { status: 'failed', error: 'fixture failure' });
    return { docKey, current, superseded, pending };
  }

  async function fixtures(auth: AuthLevel, kb = false): Promise<Fixtures> {
    const [caller, subject] = await Promise.all([
      createUser(t.app, t.deps, { admin: auth === 'admin' }),
      createUser(t.app, t.deps),
    ]);
    const [conversation, otherConversation, subjectConversation] = await Promise.all([
      conversationOf(caller, 2, true),
      conversationOf(caller, 1, false),
      conversationOf(subject, 2, true),
    ]);
    return {
      caller,
      subject,
      conversation,
      otherConversation,
      subjectConversation,
      kb: kb ? await kbFixtures(caller) : null,
      flag: await flagFixture(caller),
    };
  }

  /** A disabled feature flag at 50%, named after `owner`. */
  async function flagFixture(owner: TestUser): Promise<string> {
    const name = `fixture.${owner.id}`;
    const at = new Date();
    const flag = { enabled: false, description: 'Fixture', rolloutPercentage: 50 };
    await flagsRepo.insert(t.deps.database.db, { name, ...flag, createdAt: at, updatedAt: at });
    return name;
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

  /** The fixtures' documents and jobs as stored, and the knowledge base's counts and files. */
  async function kbStored(kb: KbFixtures | null) {
    const db = t.deps.database.db;
    const ids = kb === null ? [] : [kb.current.id, kb.superseded.id, kb.pending.id];
    return {
      documents: await db.$count(kbDocuments),
      jobs: await db.$count(kbIndexingJobs),
      chunks: await db.$count(kbChunks),
      files: await storedFiles(),
      fixtureDocuments:
        ids.length === 0
          ? []
          : await db
              .select()
              .from(kbDocuments)
              .where(inArray(kbDocuments.id, ids))
              .orderBy(kbDocuments.id),
      fixtureJobs:
        ids.length === 0
          ? []
          : await db
              .select()
              .from(kbIndexingJobs)
              .where(inArray(kbIndexingJobs.documentId, ids))
              .orderBy(kbIndexingJobs.id),
    };
  }

  /** A conversation as stored: its row, and its branches with their message counts. */
  async function stored(c: StoredConversation) {
    const db = t.deps.database.db;
    return {
      row: await conversationsRepo.find(db, c.ownerId, c.id),
      branches: await messagesRepo.branches(db, c.id),
    };
  }

  /**
   * What a rejected request must leave alone: the caller, the subject, the number of users, the
   * fixtures' conversations, the number of conversations, branches and messages, and the
   * knowledge base (its fixtures, counts and stored files), and the feature flags (the fixture's
   * flag and the count).
   */
  async function snapshot(f: Fixtures) {
    const db = t.deps.database.db;
    return {
      caller: await usersRepo.findById(db, f.caller.id),
      subject: await usersRepo.findById(db, f.subject.id),
      users: await usersRepo.count(db),
      conversation: await stored(f.conversation),
      otherConversation: await stored(f.otherConversation),
      subjectConversation: await stored(f.subjectConversation),
      conversations: await db.$count(conversations),
      conversationCounts: await db
        .select()
        .from(conversationCounts)
        .where(inArray(conversationCounts.userId, [f.caller.id, f.subject.id]))
        .orderBy(
          conversationCounts.userId,
          conversationCounts.archived,
          conversationCounts.folderKey,
        ),
      branches: await db.$count(branches),
      messages: await db.$count(messages),
      kb: await kbStored(f.kb),
      flag: await flagsRepo.find(db, f.flag),
      flags: await db.$count(featureFlags),
    };
  }

  function request(key: string, inputs: RouteInputs, f: Fixtures, c?: Case): InjectOptions {
    const [method = 'GET', template = ''] = key.split(' ');
    const sample = inputs.sample(f);
    const params = {
      ...sample.params,
      ...(typeof c?.params === 'function' ? c.params(f) : c?.params),
    };
    const path = template.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => params[name] ?? '');
    const query = [
      typeof c?.query === 'function' ? c.query(f) : (c?.query ?? sample.query),
      c?.extraQuery,
    ]
      .filter((q) => q !== undefined)
      .join('&');
    const headers: Record<string, string> = {};
    const authorization =
      c?.auth?.(f) ?? (inputs.auth === 'none' ? undefined : `Bearer ${f.caller.access}`);
    if (authorization !== undefined) headers.authorization = authorization;
    const options: InjectOptions = {
      method,
      url: query === '' ? path : `${path}?${query}`,
      headers,
    };
    if (c?.raw !== undefined) {
      if (c.raw.type !== undefined) headers['content-type'] = c.raw.type;
      options.payload = c.raw.payload;
    } else if (sample.form !== undefined) {
      const parts = c?.form === undefined ? sample.form : c.form(sample.form, f);
      headers['content-type'] = MULTIPART_TYPE;
      options.payload = multipart(parts);
    } else if (sample.body !== undefined || c?.body !== undefined) {
      const extra = typeof c?.body === 'function' ? c.body(f) : c?.body;
      options.payload = { ...sample.body, ...extra };
    }
    return options;
  }

  it('has bad-input cases for every registered route, and none for a route that is gone', () => {
    const registered = t.routes.map((r) => `${r.method} ${r.url}`);
    expect(
      registered.filter((k) => !(k in INPUTS)),
      'routes without an entry',
    ).toEqual([]);
    expect(
      Object.keys(INPUTS).filter((k) => !registered.includes(k)),
      'stale entries',
    ).toEqual([]);
  });

  it('describes each route as the app registers and documents it', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<
        string,
        Record<string, { requestBody?: unknown; parameters?: { in: string; name: string }[] }>
      >;
    }>();
    const wrong = t.routes.flatMap((r) => {
      const key = `${r.method} ${r.url}`;
      const inputs = INPUTS[key];
      const op = doc.paths[r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[r.method.toLowerCase()];
      if (inputs === undefined || op === undefined) return [`${key}: no entry or not documented`];
      const actual = {
        auth: r.auth,
        body: op.requestBody !== undefined,
        params: (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        query: (op.parameters ?? []).some((p) => p.in === 'query'),
      };
      // The upload route's multipart form is documented as its request body.
      const declared = {
        auth: inputs.auth,
        body: inputs.body === true || inputs.multipart !== undefined,
        params: inputs.params ?? [],
        query: inputs.query === true,
      };
      return JSON.stringify(actual) === JSON.stringify(declared)
        ? []
        : [`${key}: declared ${JSON.stringify(declared)}, app has ${JSON.stringify(actual)}`];
    });
    expect(wrong).toEqual([]);
  });

  for (const [key, inputs] of Object.entries(INPUTS)) {
    describe(key, () => {
      let f: Fixtures;
      beforeAll(async () => {
        f = await fixtures(inputs.auth, inputs.kb);
      });

      it.each(casesFor(key, inputs))('refuses $name: $status', async (c) => {
        const before = await snapshot(f);
        let res;
        clockOffset = c.clockMs ?? 0;
        try {
          res = await t.app.inject(request(key, inputs, f, c));
          if (key.startsWith('HEAD ')) {
            // HEAD answers as GET does without the body: the status here, the envelope from GET.
            expect(res.statusCode).toBe(c.status);
            expect(res.body).toBe('');
            res = await t.app.inject({ ...request(key, inputs, f, c), method: 'GET' });
          }
        } finally {
          clockOffset = 0;
        }
        const err = expectError(res, c.status, c.fields);
        if (c.message !== undefined) expect(err.message).toMatch(c.message);
        expect(await snapshot(f), 'a refused request changed nothing').toEqual(before);
      });

      // Run last: it may change or delete its fixtures. It shows the cases above fail for their
      // bad input alone.
      it('accepts its sample request', async () => {
        const fresh = await fixtures(inputs.auth, inputs.kb);
        const res = await t.app.inject(request(key, inputs, fresh));
        expect(res.statusCode, res.body).toBeGreaterThanOrEqual(200);
        expect(res.statusCode, res.body).toBeLessThan(300);
      });

      if (inputs.auth === 'none') {
        it('ignores a bogus Authorization header (the route is public)', async () => {
          const options = request(key, inputs, await fixtures(inputs.auth));
          options.headers = { ...options.headers, authorization: 'Bearer not.a.token' };
          const res = await t.app.inject(options);
          expect(res.statusCode, res.body).toBeGreaterThanOrEqual(200);
          expect(res.statusCode, res.body).toBeLessThan(300);
        });
      }
    });
  }

  describe("another user's id", () => {
    const byId = Object.entries(INPUTS)
      .filter(([, inputs]) => inputs.params !== undefined)
      .map(([key, inputs]) => ({
        key,
        inputs,
        status: inputs.ofAnother === undefined ? 403 : 404,
      }));

    it.each(byId)(
      '$key: an ordinary user gets $status and the other user is untouched',
      async ({ key, inputs, status }) => {
        const f = await fixtures('user', inputs.kb); // caller and subject are both ordinary users
        const before = await snapshot(f);
        const { ofAnother } = inputs;
        if (ofAnother === undefined) {
          expectError(await t.app.inject(request(key, inputs, f)), status);
          expect(await snapshot(f)).toEqual(before);
          return;
        }
        const naming = (params: Record<string, string>): Case => ({ name: key, status, params });
        const err = expectError(
          await t.app.inject(request(key, inputs, f, naming(ofAnother(f)))),
          404,
        );
        expect(await snapshot(f)).toEqual(before);
        // Answered exactly as ids that name nothing: nothing tells the other user's ids apart.
        const unknownIds = Object.fromEntries(
          Object.keys(ofAnother(f)).map((p) => [p, randomUUID()]),
        );
        const none = expectError(
          await t.app.inject(request(key, inputs, f, naming(unknownIds))),
          404,
        );
        expect(err).toEqual(none);
      },
    );
  });

  describe('text is accepted and stored as sent', () => {
    const names = [
      'Zoë Ñandú-Ødegård',
      '王小明',
      'محمد عبد الله',
      'देवनागरी नाम',
      'Ελένη Παπαδοπούλου',
      '👩🏽‍⚕️ Dr. Emoji 🩺',
      'e\u0301 combining',
      "D'Artagnan O'Brien",
      SQL,
      "Robert'); DROP TABLE users;--",
      '🩺'.repeat(200),
      'a'.repeat(200),
    ];

    it.each(names)('registers and renames with full_name %s', async (name) => {
      const email = uniqueEmail('text');
      const created = dataOf<{ id: string; full_name: string }>(
        await register(t.app, { email, password: PASSWORD, full_name: name }),
      );
      expect(created.full_name).toBe(name);
      expect((await usersRepo.findById(t.deps.database.db, created.id))?.fullName).toBe(name);

      const u = await createUser(t.app, t.deps);
      const renamed = dataOf<{ full_name: string }>(
        await call('PUT', '/api/users/me', u.access, { full_name: name }),
      );
      expect(renamed.full_name).toBe(name);
      expect(
        dataOf<{ full_name: string }>(await call('GET', '/api/users/me', u.access)).full_name,
      ).toBe(name);
    });

    it.each(names)('creates and renames a conversation titled %s', async (title) => {
      const u = await createUser(t.app, t.deps);
      const created = dataOf<ConversationDto>(
        await call('POST', '/conversations', u.access, { title }),
      );
      expect(created.title).toBe(title);
      const db = t.deps.database.db;
      expect((await conversationsRepo.find(db, u.id, created.id))?.title).toBe(title);

      const other = dataOf<ConversationDto>(
        await call('POST', '/conversations', u.access, { title: 'Untitled' }),
      );
      const url = `/conversations/${other.id}`;
      expect(dataOf<ConversationDto>(await call('PUT', url, u.access, { title })).title).toBe(
        title,
      );
      expect(dataOf<ConversationDto>(await call('GET', url, u.access)).title).toBe(title);
      const page = dataOf<{ items: ConversationDto[] }>(
        await call('GET', '/conversations', u.access),
      );
      expect(page.items.map((c) => c.title)).toEqual([title, title]);
    });

    it.each([
      SQL,
      "cardio'); DROP TABLE conversations;--",
      '% _ \\ *',
      'قسم القلب',
      '🫀 cardiology',
      '王小明',
      'f'.repeat(128),
      '🩺'.repeat(128),
    ])('files a conversation in folder %s and finds it by that folder alone', async (folder) => {
      const u = await createUser(t.app, t.deps);
      const filed = dataOf<ConversationDto>(
        await call('POST', '/conversations', u.access, { title: 'Filed', folder_id: folder }),
      );
      expect(filed.folderId).toBe(folder);
      // Others in no folder, in a folder differing only in case, and in a prefix of it.
      for (const folder_id of [
        null,
        folder.toUpperCase(),
        Array.from(folder).slice(0, -1).join(''),
      ]) {
        if (folder_id === folder) continue;
        dataOf(await call('POST', '/conversations', u.access, { title: 'Other', folder_id }));
      }
      const found = dataOf<{ items: ConversationDto[]; total: number }>(
        await call('GET', `/conversations?folderId=${encodeURIComponent(folder)}`, u.access),
      );
      expect(found.items.map((c) => [c.id, c.folderId])).toEqual([[filed.id, folder]]);
      expect(found.total).toBe(1);
    });

    it('stores a branch’s initial_message exactly as sent', async () => {
      const u = await createUser(t.app, t.deps);
      const { id } = await t.deps.conversations.create(u.id, { title: 'Text' });
      const { message } = await t.deps.messages.append(u.id, id, { role: 'user', content: 'Hi' });
      const text = `${SQL}\n\t👩🏽‍⚕️ محمد — e\u0301 ${'x'.repeat(100)}`;
      const branch = dataOf<{ id: string }>(
        await call('POST', `/conversations/${id}/branches`, u.access, {
          parent_message_id: message.id,
          initial_message: text,
        }),
      );
      const thread = dataOf<{ items: { content: string }[] }>(
        await call('GET', `/conversations/${id}/messages?branch_id=${branch.id}`, u.access),
      );
      expect(thread.items.map((m) => m.content)).toEqual(['Hi', text]);
    });

    it('takes an email with quotes and SQL-like characters literally', async () => {
      const email = `o'brien+1=1--${randomBytes(3).toString('hex')}@example.test`;
      const user = await createUser(t.app, t.deps, { email });
      expect((await usersRepo.findById(t.deps.database.db, user.id))?.email).toBe(email);
      const count = await usersRepo.count(t.deps.database.db);
      expectError(await login(t.app, `x'OR'1'='1@example.test`), 401);
      expectError(await login(t.app, SQL), 422, ['body.email']);
      expect(await usersRepo.count(t.deps.database.db)).toBe(count);
    });
  });

  describe('limits at their boundaries', () => {
    let admin: TestUser;
    beforeAll(async () => {
      admin = await createUser(t.app, t.deps, { admin: true });
    });

    it('accepts an email of 254 characters, a name of 200 and a password of 128', async () => {
      const email = emailOfLength(254);
      expect(email).toHaveLength(254);
      const password = 'p4ss '.repeat(26).slice(0, 128);
      const res = await register(t.app, { email, password, full_name: 'n'.repeat(200) });
      expect(res.statusCode, res.body).toBe(201);
      expect(dataOf(await login(t.app, email, password))).toMatchObject({ token_type: 'bearer' });
    });

    it('checks a refresh token of 4096 characters as a token, not as too long', async () => {
      const res = await call('POST', '/api/auth/refresh', undefined, {
        refresh_token: 'a'.repeat(4096),
      });
      expectError(res, 401);
    });

    it('reads a body just under 1 MiB and validates it (422, not 413), changing nothing', async () => {
      const count = await usersRepo.count(t.deps.database.db);
      const body = { ...registration(), full_name: 'x'.repeat(JSON_BODY_LIMIT - 200) };
      expectError(await register(t.app, body), 422, ['body.full_name']);
      expect(await usersRepo.count(t.deps.database.db)).toBe(count);
    });

    it.each(['limit=1', 'limit=100', 'offset=1000000', 'offset=0&limit=100'])(
      'accepts the page %s',
      async (query) => {
        const page = dataOf<{ limit: number }>(
          await call('GET', `/api/users?${query}`, admin.access),
        );
        expect(page.limit).toBe(Number(/limit=(\d+)/.exec(query)?.[1] ?? 20));
      },
    );
  });

  describe('knowledge-base limits at their boundaries', () => {
    let admin: TestUser;
    beforeAll(async () => {
      admin = await createUser(t.app, t.deps, { admin: true });
    });

    const send = (parts: FormPart[]) =>
      t.app.inject({
        method: 'POST',
        url: '/api/admin/kb/documents',
        headers: { ...bearer(admin.access), 'content-type': MULTIPART_TYPE },
        payload: multipart(parts),
      });
    const tag = () => randomBytes(4).toString('hex');

    interface DocumentDto {
      id: string;
      title: string;
      category: string;
      doc_key: string;
      content_type: string;
      size_bytes: number;
      status: string;
      version: number;
      superseded_by: string | null;
      job: { state: string } | null;
    }

    it('accepts a title of 200 characters, a category of 100, a doc_key of 128 and a one-byte file', async () => {
      const docKey = `${tag()}${'k'.repeat(120)}`;
      const res = await send([
        { name: 'title', value: 't'.repeat(200) },
        { name: 'category', value: 'c'.repeat(100) },
        { name: 'doc_key', value: docKey },
        filePart('x'),
      ]);
      expect(res.statusCode, res.body).toBe(202);
      const doc = dataOf<DocumentDto>(res);
      expect(doc).toMatchObject({
        title: 't'.repeat(200),
        category: 'c'.repeat(100),
        doc_key: docKey,
        content_type: 'text/plain',
        size_bytes: 1,
        status: 'uploaded',
        version: 1,
        job: { state: 'pending' },
      });
      expect(await storedFiles()).toContain(path.join('kb', doc.id, 'original'));
    });

    it('types a file by its content: PDF bytes named .txt and declared text/plain are a PDF', async () => {
      const res = await send([
        { name: 'title', value: `Disguised ${tag()}` },
        { name: 'category', value: 'cardiology' },
        filePart(Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1'), 'notes.txt', 'text/plain'),
      ]);
      expect(res.statusCode, res.body).toBe(202);
      expect(dataOf<DocumentDto>(res).content_type).toBe('application/pdf');
    });

    it('answers the same content again with 200 and the existing document, storing nothing', async () => {
      const parts = uploadForm();
      const first = dataOf<DocumentDto>(await send(parts));
      const db = t.deps.database.db;
      const before = [await db.$count(kbDocuments), await db.$count(kbIndexingJobs)];
      const files = await storedFiles();
      const again = await send(parts);
      expect(again.statusCode, again.body).toBe(200);
      expect(dataOf<DocumentDto>(again)).toMatchObject({ id: first.id, version: 1 });
      expect([await db.$count(kbDocuments), await db.$count(kbIndexingJobs)]).toEqual(before);
      expect(await storedFiles()).toEqual(files);
    });

    it('uploads new content under a doc_key as version 2 and supersedes version 1', async () => {
      const docKey = `versions-${tag()}`;
      const upload = (text: string) =>
        send([
          { name: 'title', value: 'Versioned guideline' },
          { name: 'category', value: 'cardiology' },
          { name: 'doc_key', value: docKey },
          filePart(text),
        ]);
      const first = dataOf<DocumentDto>(await upload('The first version.'));
      const res = await upload('The second version.');
      expect(res.statusCode, res.body).toBe(202);
      const second = dataOf<DocumentDto>(res);
      expect(second).toMatchObject({ doc_key: docKey, version: 2, superseded_by: null });
      const old = dataOf<DocumentDto>(
        await call('GET', `/api/admin/kb/documents/${first.id}`, admin.access),
      );
      expect(old).toMatchObject({ version: 1, superseded_by: second.id });
    });

    // Search works before this process has indexed anything (the indexing worker is off here).
    it.each([
      ['q of one character and limit 1', 'q=a&limit=1'],
      ['q of 1000 characters and limit 50', `q=${'a'.repeat(1000)}&limit=50`],
      ['q of 1000 code points of emoji', `q=${encodeURIComponent('🩺'.repeat(1000))}`],
    ])('searches with %s', async (_name, query) => {
      const res = await call('GET', `/api/admin/kb/search?${query}`, admin.access);
      expect(res.statusCode, res.body).toBe(200);
      expect(dataOf<{ items: unknown[] }>(res).items).toEqual([]);
    });
  });

  describe('conversation limits at their boundaries', () => {
    let u: TestUser;
    let conversationId: string;
    beforeAll(async () => {
      u = await createUser(t.app, t.deps);
      ({ id: conversationId } = await t.deps.conversations.create(u.id, { title: 'Bounds' }));
      for (const content of ['one', 'two', 'three']) {
        await t.deps.messages.append(u.id, conversationId, { role: 'user', content });
      }
    });

    it.each([
      ['page=100000&pageSize=100', 100_000, 100, 1, 0],
      ['page=1&pageSize=1', 1, 1, 1, 1],
      ['archived=false', 1, 20, 1, 1],
      ['archived=true', 1, 20, 0, 0],
    ])('lists the page %s', async (query, page, pageSize, total, items) => {
      const data = dataOf<{ items: unknown[]; total: number; page: number; pageSize: number }>(
        await call('GET', `/conversations?${query}`, u.access),
      );
      expect(data).toMatchObject({ page, pageSize, total });
      expect(data.items).toHaveLength(items);
    });

    it.each([
      ['limit=1', 1, ['three']],
      ['limit=200', 200, ['one', 'two', 'three']],
      ['branch_id=main', 50, ['one', 'two', 'three']],
    ])('reads the thread with %s', async (query, limit, contents) => {
      const data = dataOf<{ items: { content: string }[]; total: number; limit: number }>(
        await call('GET', `/conversations/${conversationId}/messages?${query}`, u.access),
      );
      expect(data.limit).toBe(limit);
      expect(data.total).toBe(3);
      expect(data.items.map((m) => m.content)).toEqual(contents);
    });

    it('accepts a title of 200 characters, a folder of 128 and a message of 32000', async () => {
      const created = dataOf<{ id: string; title: string; folderId: string }>(
        await call('POST', '/conversations', u.access, {
          title: 't'.repeat(200),
          folder_id: 'f'.repeat(128),
        }),
      );
      expect([created.title.length, created.folderId.length]).toEqual([200, 128]);
      const { message } = await t.deps.messages.append(u.id, created.id, {
        role: 'user',
        content: 'start',
      });
      const initial_message = 'm'.repeat(32_000);
      const url = `/conversations/${created.id}/branches`;
      const branch = dataOf<{ messageCount: number }>(
        await call('POST', url, u.access, { parent_message_id: message.id, initial_message }),
      );
      expect(branch.messageCount).toBe(1);
    });
  });

  describe('tokens over time', () => {
    it('accepts an access token just before it expires and refuses it just after', async () => {
      const u = await createUser(t.app, t.deps);
      try {
        clockOffset = 899_000;
        dataOf(await call('GET', '/api/auth/me', u.access));
        clockOffset = 901_000;
        expect(expectError(await call('GET', '/api/auth/me', u.access), 401).message).toMatch(
          /expired/,
        );
      } finally {
        clockOffset = 0;
      }
    });

    it('refuses a refresh token after seven days', async () => {
      const [early, late] = await Promise.all([
        createUser(t.app, t.deps),
        createUser(t.app, t.deps),
      ]);
      const refresh = (token: string) =>
        call('POST', '/api/auth/refresh', undefined, { refresh_token: token });
      try {
        clockOffset = 6 * 86_400_000;
        dataOf(await refresh(early.refresh));
        clockOffset = 7 * 86_400_000 + 1000;
        expectError(await refresh(late.refresh), 401);
      } finally {
        clockOffset = 0;
      }
    });

    it('refuses the refresh token after logout and after a password change; a new login works', async () => {
      const [a, b] = await Promise.all([createUser(t.app, t.deps), createUser(t.app, t.deps)]);
      dataOf(await call('POST', '/api/auth/logout', a.access));
      const payload = { old_password: b.password, new_password: NEW_PASSWORD };
      dataOf(await call('POST', '/api/users/me/change-password', b.access, payload));
      for (const token of [a.refresh, b.refresh]) {
        expectError(
          await call('POST', '/api/auth/refresh', undefined, { refresh_token: token }),
          401,
        );
      }
      expectError(await login(t.app, b.email, b.password), 401); // the old password is gone
      dataOf(await login(t.app, a.email, a.password));
      dataOf(await login(t.app, b.email, NEW_PASSWORD));
    });
  });
});
