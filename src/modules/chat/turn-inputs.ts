import { AppError } from '../../errors.js';
import type { Logger } from '../../platform/logger.js';
import type { GlossaryEntry, LlmMessage, Passage } from '../../providers/llm/types.js';
import type { MessageService } from '../conversations/messages.js';
import { toMessageDto, type StoredMessage } from '../conversations/schema.js';
import type { SearchService } from '../knowledge/search.js';
import type { AnswerFrame, DoneFrame } from './protocol.js';
import { retrievePassages } from './retrieval.js';
import type { SearchGate } from './search-gate.js';
import { ToolError } from './tools/types.js';

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

type Retrieved =
  { ok: true; passages: Passage[] } | { ok: false; timedOut: boolean; error: unknown };

/**
 * A turn's knowledge-base searches, all through one gate (`SearchGate`): the search for the
 * question before the model runs, and the model's own `search_knowledge_base` calls. Waiting for
 * a slot counts against `retrievalTimeoutMs`.
 */
export class TurnRetrieval {
  constructor(
    private readonly search: SearchService,
    private readonly gate: SearchGate,
    private readonly limits: { passages: number; retrievalTimeoutMs: number },
    private readonly log: Logger,
  ) {}

  /**
   * Before a turn is taken: refuses it (SERVICE_UNAVAILABLE, with a retry hint) when its search
   * would not be answered within the deadline at the gate's present pace.
   */
  admission(): void {
    const busyMs = this.gate.admit(this.limits.retrievalTimeoutMs);
    if (busyMs === undefined) return;
    const seconds = Math.max(1, Math.ceil(busyMs / 1000));
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      `The knowledge base is answering too many questions; try again in ${String(seconds)} s`,
      null,
      { 'retry-after': String(seconds) },
    );
  }

  /**
   * The question's passages; without them (search failed or too slow) the turn goes on, and says
   * so. `glossary`: the question's glossary entries, which the turn is reading for its model.
   */
  async forQuestion(
    question: StoredMessage,
    emit: (f: AnswerFrame) => void,
    glossary?: Promise<readonly GlossaryEntry[]>,
  ): Promise<Passage[]> {
    const found = await this.within(question.content, this.limits.passages, true, glossary);
    if (found.ok) return found.passages;
    this.log.warn(
      { err: found.error },
      'knowledge-base retrieval failed; answering without passages',
    );
    emit({
      type: 'error',
      code: 'KB_TIMEOUT',
      message: found.timedOut
        ? 'The knowledge base did not answer in time'
        : 'The knowledge base could not be searched',
      request_ref: question.id,
    });
    return [];
  }

  /** For the search tool: a failure is the tool's error. */
  readonly forTool = async (query: string, limit: number): Promise<Passage[]> => {
    const found = await this.within(query, limit);
    if (found.ok) return found.passages;
    throw new ToolError(
      found.timedOut
        ? 'The knowledge base did not answer in time'
        : 'The knowledge base could not be searched',
    );
  };

  /** The passages, or why there are none; a search past the deadline is aborted. */
  private async within(
    query: string,
    limit: number,
    question = false,
    glossary?: Promise<readonly GlossaryEntry[]>,
  ): Promise<Retrieved> {
    const { retrievalTimeoutMs } = this.limits;
    const deadline = performance.now() + retrievalTimeoutMs;
    const giveUp = new AbortController();
    const work = this.gate.run(
      (signal) => retrievePassages(this.search, query, { limit, glossary }, signal),
      deadline,
      giveUp.signal,
      question,
    );
    const timedOut = {
      ok: false,
      timedOut: true,
      error: new Error('knowledge-base search timed out'),
    } as const;
    try {
      if (!(await within(work, retrievalTimeoutMs))) {
        // The search stops (and its slot frees) instead of running on for nobody.
        giveUp.abort(new Error('knowledge-base search timed out'));
        work.catch(() => undefined);
        return timedOut;
      }
      const passages = await work;
      return passages === undefined ? timedOut : { ok: true, passages };
    } catch (error) {
      return { ok: false, timedOut: false, error };
    }
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
