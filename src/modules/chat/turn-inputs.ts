import type { LlmMessage, Passage } from '../../providers/llm/types.js';
import type { MessageService } from '../conversations/messages.js';
import { toMessageDto, type StoredMessage } from '../conversations/schema.js';
import type { SearchService } from '../knowledge/search.js';
import type { DoneFrame } from './protocol.js';
import { retrievePassages } from './retrieval.js';
import type { SearchGate } from './search-gate.js';

/** The thread before the question (user and assistant turns, at most `limit`), then the question. */
export async function threadHistory(
  messages: MessageService,
  userId: string,
  question: StoredMessage,
  limit: number,
): Promise<LlmMessage[]> {
  const { messages: thread } = await messages.thread(
    userId,
    question.conversationId,
    question.branchId,
    { limit, before: question.id },
  );
  const earlier = thread.flatMap((m): LlmMessage[] =>
    m.role === 'user' || m.role === 'assistant' ? [{ role: m.role, content: m.content }] : [],
  );
  return [...earlier, { role: 'user', content: question.content }];
}

export type Retrieved =
  { ok: true; passages: Passage[] } | { ok: false; timedOut: boolean; error: unknown };

/**
 * The passages for a question, or why there are none: the search failed, or no slot of `gate`
 * came free and the search did not finish within `timeoutMs` (waiting counts). A search given up
 * on runs on in its slot, so the gate still bounds what the database is asked to do at once.
 */
export async function retrieveWithin(
  gate: SearchGate,
  search: SearchService,
  query: string,
  limit: number,
  timeoutMs: number,
): Promise<Retrieved> {
  const deadline = performance.now() + timeoutMs;
  const work = gate.run(() => retrievePassages(search, query, { limit }), deadline);
  const timedOut = {
    ok: false,
    timedOut: true,
    error: new Error('knowledge-base search timed out'),
  } as const;
  try {
    if (!(await within(work, timeoutMs))) {
      work.catch(() => undefined);
      return timedOut;
    }
    const passages = await work;
    return passages === undefined ? timedOut : { ok: true, passages };
  } catch (error) {
    return { ok: false, timedOut: false, error };
  }
}

/** Whether `work` settled within `ms` (a rejection counts as settled: awaiting it throws). */
export async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => {
      resolve(false);
    }, ms);
  });
  const settled = work.then(
    () => true,
    () => true,
  );
  const done = await Promise.race([settled, timeout]);
  clearTimeout(timer);
  return done;
}

export function doneFrame(question: StoredMessage, answer: StoredMessage): DoneFrame {
  return {
    type: 'message_done',
    conversation_id: answer.conversationId,
    user_message: toMessageDto(question),
    message: toMessageDto(answer),
  };
}
