import { expect } from 'vitest';
import type { App } from '../../src/platform/http/types.js';
import { bearer, dataOf } from './factories.js';
import type { RecordedRequest } from './openai-chat-server.js';

/** A stored message as `GET /conversations/{id}/messages` answers it. */
export interface ThreadMessage {
  id: string;
  role: string;
  content: string;
  parentMessageId: string | null;
  clientMessageId: string | null;
  interrupted: boolean;
}

/** The main branch's thread of a conversation, oldest first. */
export async function storedThread(
  app: App,
  token: string,
  conversationId: string,
): Promise<ThreadMessage[]> {
  const res = await app.inject({
    method: 'GET',
    url: `/conversations/${conversationId}/messages`,
    headers: bearer(token),
  });
  expect(res.statusCode, res.body).toBe(200);
  return dataOf<{ items: ThreadMessage[] }>(res).items;
}

/**
 * Checks that the thread reads question, its answer, next question, its answer (DECISIONS 4):
 * each answer's parent is the question before it, each question's the answer before it. Returns
 * the turns in order.
 */
export function turnsOf(
  thread: ThreadMessage[],
): { question: ThreadMessage; answer: ThreadMessage }[] {
  expect(thread.map((m) => m.role)).toEqual(
    thread.map((_m, i) => (i % 2 === 0 ? 'user' : 'assistant')),
  );
  thread.forEach((m, i) => {
    expect(m.parentMessageId, `parent of message ${String(i)}`).toBe(thread[i - 1]?.id ?? null);
  });
  const turns = [];
  for (let i = 0; i + 1 < thread.length; i += 2) {
    const [question, answer] = thread.slice(i, i + 2);
    if (question !== undefined && answer !== undefined) turns.push({ question, answer });
  }
  return turns;
}

/** The user and assistant messages a request to the model carried, in order. */
export function historyOf(
  request: RecordedRequest | undefined,
): { role: string; content: string }[] {
  const messages = (request?.body.messages ?? []) as { role: string; content: unknown }[];
  return messages
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .map((m) => ({ role: m.role, content: String(m.content) }));
}
