import { randomUUID } from 'node:crypto';
import { AppError } from '../../errors.js';
import type { Logger } from '../../platform/logger.js';
import type { Metrics } from '../../platform/metrics.js';
import type { PubSub } from '../../platform/pubsub.js';
import type { LlmProvider } from '../../providers/llm/types.js';
import type { SearchService } from '../knowledge/search.js';
import { MAIN_BRANCH, type MessageService } from '../conversations/messages.js';
import type { StoredMessage } from '../conversations/schema.js';
import type { ConversationsService } from '../conversations/service.js';
import type { AnswerStreams, Follow, Sequenced } from './answer-streams.js';
import { cancelChannel, userChannel, type UserEvent } from './channels.js';
import type { AnswerFrame, DoneFrame, MessageSendFrame } from './protocol.js';
import { doneFrame, threadHistory, TurnRetrieval, within } from './turn-inputs.js';
import { knowledgeSearchTool } from './tools/search.js';
import type { Tool } from './tools/types.js';
import { SearchGate } from './search-gate.js';
import { runTurn, TURN_LIMITS, type TurnLimits, type TurnOutcome } from './turn.js';

export interface ChatLimits {
  /** Answers generating at once per user on this instance. */
  maxActivePerUser: number;
  /** Passages retrieved for the question before the model runs. */
  passages: number;
  /** Earlier messages of the thread given to the model. */
  historyMessages: number;
  /** The knowledge-base search before the model runs; past it the turn goes on without passages. */
  retrievalTimeoutMs: number;
  /** Turns' searches running at once on this instance; the others queue (their wait counts). */
  concurrentSearches: number;
  turn: TurnLimits;
}

export const CHAT_LIMITS: ChatLimits = {
  maxActivePerUser: 3,
  // The extractive model's refusal threshold was chosen with 8 passages a question (eval/README.md).
  passages: 8,
  historyMessages: 20,
  retrievalTimeoutMs: 5000,
  concurrentSearches: 4,
  turn: TURN_LIMITS,
};

export interface ChatDeps {
  messages: MessageService;
  conversations: ConversationsService;
  search: SearchService;
  llm: LlmProvider;
  /** Tools besides the knowledge-base search, e.g. the medical calculator. */
  tools: Tool[];
  streams: AnswerStreams;
  pubsub: PubSub;
  metrics: Metrics;
  log: Logger;
  limits?: ChatLimits;
}

/** What a `message_send` leads to: an answer to follow, or a turn that is already complete. */
export type SendOutcome = { follow: string } | { done: DoneFrame };

/**
 * Chat turns (DECISIONS 4): stores the question, runs the answer detached from any socket (a
 * dropped socket does not stop it; only a cancel does, from any instance), streams its frames into
 * `AnswerStreams` for whoever follows it, and stores the answer with its citations and tool calls.
 */
export class ChatService {
  private readonly limits: ChatLimits;
  private readonly active = new Map<string, number>();
  private readonly running = new Map<
    string,
    { controller: AbortController; done: Promise<void> }
  >();

  private readonly retrieval: TurnRetrieval;

  constructor(readonly deps: ChatDeps) {
    this.limits = deps.limits ?? CHAT_LIMITS;
    this.retrieval = new TurnRetrieval(
      deps.search,
      new SearchGate(this.limits.concurrentSearches),
      this.limits,
      deps.log,
    );
  }

  async send(userId: string, frame: MessageSendFrame): Promise<SendOutcome> {
    // The slot is taken before anything is awaited, so parallel sends cannot overshoot the limit.
    this.reserve(userId);
    let started = false;
    try {
      const stored = await this.deps.messages.append(userId, frame.conversation_id, {
        branchId: frame.branch_id ?? MAIN_BRANCH,
        role: 'user',
        content: frame.content,
        clientMessageId: frame.client_message_id ?? null,
      });
      if (!stored.created) {
        const earlier = await this.earlierTurn(stored.message);
        if (earlier !== undefined) return earlier;
      }
      const messageId = await this.start(userId, stored.message);
      started = true;
      return { follow: messageId };
    } finally {
      // A started answer gives its slot back when it ends.
      if (!started) this.release(userId);
    }
  }

  private reserve(userId: string): void {
    const active = this.active.get(userId) ?? 0;
    if (active >= this.limits.maxActivePerUser) {
      throw new AppError(
        'RATE_LIMITED',
        `At most ${String(this.limits.maxActivePerUser)} answers can be generating at once`,
      );
    }
    this.active.set(userId, active + 1);
  }

  private release(userId: string): void {
    const left = (this.active.get(userId) ?? 1) - 1;
    if (left > 0) this.active.set(userId, left);
    else this.active.delete(userId);
  }

  /** `message_resume`: the answer to follow, or its `message_done` when it is stored already. */
  async resume(userId: string, messageId: string): Promise<SendOutcome> {
    const info = await this.deps.streams.info(messageId);
    if (info !== undefined) {
      if (info.userId !== userId) throw answerNotFound();
      return { follow: messageId };
    }
    const done = await this.storedTurn(userId, messageId);
    if (done === undefined) throw answerNotFound();
    return { done };
  }

  /** `message_cancel`, wherever the answer runs. */
  async cancel(userId: string, messageId: string): Promise<SendOutcome> {
    const outcome = await this.resume(userId, messageId);
    if ('follow' in outcome) this.deps.pubsub.publish(cancelChannel(messageId), { userId });
    return outcome;
  }

  /** Every frame of an answer, stored then live, until its `message_done`. */
  follow(messageId: string, onFrame: (s: Sequenced) => void): Promise<Follow> {
    return this.deps.streams.follow(messageId, 0, onFrame);
  }

  /**
   * Shutdown: answers running here get half of `timeoutMs` to finish; the rest are cancelled and
   * stored as interrupted within the other half.
   */
  async close(timeoutMs: number): Promise<void> {
    const all = [...this.running.values()];
    const settled = Promise.allSettled(all.map((r) => r.done));
    if (await within(settled, timeoutMs / 2)) return;
    for (const r of all) r.controller.abort();
    await within(settled, timeoutMs / 2);
  }

  private async earlierTurn(question: StoredMessage): Promise<SendOutcome | undefined> {
    const reply = await this.deps.messages.replyTo(question);
    if (reply?.role === 'assistant') return { done: doneFrame(question, reply) };
    const running = await this.deps.streams.answerTo(question.id);
    return running === undefined ? undefined : { follow: running };
  }

  private async storedTurn(userId: string, messageId: string): Promise<DoneFrame | undefined> {
    const answer = await this.deps.messages.findOwned(userId, messageId);
    if (answer?.role !== 'assistant' || answer.parentMessageId === null) return undefined;
    const question = await this.deps.messages.findOwned(userId, answer.parentMessageId);
    return question === undefined ? undefined : doneFrame(question, answer);
  }

  /** Opens the answer's stream and starts it; returns its id. */
  private async start(userId: string, question: StoredMessage): Promise<string> {
    const messageId = randomUUID();
    const { streams, pubsub } = this.deps;
    await streams.open({
      messageId,
      userMessageId: question.id,
      userId,
      conversationId: question.conversationId,
    });
    const controller = new AbortController();
    const unsubscribe = await pubsub.subscribe(cancelChannel(messageId), (payload) => {
      if ((payload as { userId?: unknown }).userId === userId) controller.abort();
    });
    const done = this.answer(userId, question, messageId, controller.signal)
      .catch((err: unknown) => {
        this.deps.log.error({ err, messageId }, 'chat turn failed');
      })
      .finally(() => {
        unsubscribe();
        this.running.delete(messageId);
        this.release(userId);
      });
    this.running.set(messageId, { controller, done });
    return messageId;
  }

  /**
   * The model's answer to a stored question: the thread's history, the knowledge-base passages,
   * the tools, the model, the first-chunk metric. Frames go to `emit`; nothing is stored. The chat
   * socket's turns and the voice pipeline's both run through here.
   */
  async generate(
    userId: string,
    question: StoredMessage,
    messageId: string,
    signal: AbortSignal,
    emit: (frame: AnswerFrame) => void,
  ): Promise<TurnOutcome> {
    const { messages, conversations, metrics, llm } = this.deps;
    const startedAt = performance.now();
    void conversations
      .titleFromQuestion(userId, question.conversationId, question.content)
      .catch(() => undefined);
    const history = await threadHistory(messages, userId, question, this.limits.historyMessages);
    const passages = await this.retrieval.forQuestion(question, emit);
    const outcome = await runTurn(
      llm,
      {
        userId,
        conversationId: question.conversationId,
        messageId,
        userMessageId: question.id,
        history,
        passages,
        tools: [knowledgeSearchTool(this.retrieval.forTool, passages), ...this.deps.tools],
        signal,
        startedAt,
        emit,
      },
      this.limits.turn,
    );
    if (outcome.firstChunkMs !== undefined)
      metrics.chatFirstChunk.observe(outcome.firstChunkMs / 1000);
    return outcome;
  }

  private async answer(
    userId: string,
    question: StoredMessage,
    messageId: string,
    signal: AbortSignal,
  ): Promise<void> {
    const { streams, messages } = this.deps;
    let seq = 0;
    const emit = (frame: AnswerFrame) => {
      streams.append(messageId, ++seq, frame);
    };
    const outcome = await this.generate(userId, question, messageId, signal, emit);
    if (outcome.error !== undefined) {
      this.deps.log.warn({ err: outcome.error, messageId }, 'language model failed mid-turn');
      emit({
        type: 'error',
        code: 'LLM_ERROR',
        message: 'The language model failed; the answer is incomplete',
        request_ref: messageId,
      });
    }
    try {
      const stored = await messages.append(userId, question.conversationId, {
        id: messageId,
        branchId: question.branchId,
        role: 'assistant',
        content: outcome.content,
        citations: outcome.citations,
        toolCalls: outcome.toolCalls,
        interrupted: outcome.interrupted,
      });
      const done = doneFrame(question, stored.message);
      emit(done);
      // The user's sockets that did not follow the answer hear of it too (socket hub).
      this.deps.pubsub.publish(userChannel(userId), {
        kind: 'done',
        frame: done,
      } satisfies UserEvent);
    } catch (err) {
      this.deps.log.error({ err, messageId }, 'storing a chat answer failed');
      emit({
        type: 'error',
        code: 'INTERNAL_ERROR',
        message: 'The answer could not be stored',
        request_ref: messageId,
      });
    } finally {
      streams.end(messageId);
    }
  }
}

const answerNotFound = () => new AppError('NOT_FOUND', 'Message not found');
