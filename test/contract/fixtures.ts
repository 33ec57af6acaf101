import type { Deps } from '../../src/deps.js';
import type { App } from '../../src/platform/http/types.js';
import { PASSWORD, createUser, type TestUser } from '../helpers/factories.js';
import { jobOf, uploadNew } from '../helpers/knowledge.js';
import type { Known } from './valid.js';

export const CALLERS = ['user', 'admin', 'anonymous', 'garbage token'] as const;
export type Caller = (typeof CALLERS)[number];

/** A token that is well-formed as a JWT and signed with a key the service does not have. */
const GARBAGE_TOKEN =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIwMDAwMDAwMC0wMDAwLTAwMDAtMDAwMC0wMDAwMDAwMDAwMDAiLCJ0eXBlIjoiYWNjZXNzIn0.c2lnbmVkLXdpdGgtYW5vdGhlci1rZXk';

export interface CallerFixture {
  caller: Caller;
  headers: Record<string, string>;
  known: Known;
}

/** Fresh accounts for one operation, so one operation's logout or deletion never reaches another. */
async function account(
  app: App,
  deps: Deps,
  admin: boolean,
): Promise<{ user: TestUser; known: Known }> {
  const user = await createUser(app, deps, { admin });
  const subject = await createUser(app, deps);
  const conversation = await deps.conversations.create(user.id, {
    title: 'Chest pain',
    folderId: null,
  });
  const first = await deps.messages.append(user.id, conversation.id, {
    role: 'user',
    content: 'Troponin?',
  });
  const second = await deps.messages.append(user.id, conversation.id, {
    role: 'assistant',
    content: 'Repeat at 3 h [1].',
  });
  const fork = await deps.messages.fork(user.id, conversation.id, first.message.id, 'And at 6 h?');
  const messageIds = [first.message.id, second.message.id];
  return {
    user,
    known: {
      conversation_id: [conversation.id],
      parent_message_id: messageIds,
      before: messageIds,
      branch_id: ['main', fork.branch.id],
      user_id: [subject.id, user.id],
      refresh_token: [user.refresh],
      email: [user.email],
      password: [PASSWORD],
      old_password: [PASSWORD],
      new_password: ['a different passphrase 42'],
      q: ['beta blockers after myocardial infarction'],
    },
  };
}

/** A document and its job, for the operations that name one. */
async function knowledge(app: App, admin: TestUser): Promise<Known> {
  const doc = await uploadNew(app, admin.access, {
    file: 'Beta blockers reduce mortality after myocardial infarction.\n',
    title: `Contract fixture ${admin.id.slice(0, 8)}`,
    category: 'cardiology',
  });
  return { document_id: [doc.id], job_id: [jobOf(doc).id], doc_key: [doc.doc_key] };
}

/**
 * The four callers of the issue for one operation, each with the values the fuzzer may use: an
 * ordinary user, an administrator, no token, and a forged token.
 */
export async function callersFor(
  app: App,
  deps: Deps,
  needsDocument: boolean,
): Promise<CallerFixture[]> {
  const user = await account(app, deps, false);
  const admin = await account(app, deps, true);
  const kb = needsDocument ? await knowledge(app, admin.user) : {};
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  return [
    { caller: 'user', headers: bearer(user.user.access), known: { ...user.known, ...kb } },
    { caller: 'admin', headers: bearer(admin.user.access), known: { ...admin.known, ...kb } },
    { caller: 'anonymous', headers: {}, known: { ...user.known, ...kb } },
    { caller: 'garbage token', headers: bearer(GARBAGE_TOKEN), known: { ...user.known, ...kb } },
  ];
}
