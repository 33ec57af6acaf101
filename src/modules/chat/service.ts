import { randomUUID } from 'node:crypto';
import { AppError, serviceUnavailable } from '../../errors.js';
import type { KeyValueStore } from '../../platform/kv.js';
import { Lease } from '../../platform/leases.js';
import type { Logger } from '../../platform/logger.js';
import type { Metrics } from '../../platform/metrics.js';
import type { Outages } from '../../platform/outages.js';
import type { PubSub } from '../../platform/pubsub.js';
import type { GlossaryEntry, LlmProvider } from '../../providers/llm/types.js';
import type { SearchService } from '../knowledge/search.js';
import { MAIN_BRANCH, type MessageService } from '../conversations/messages.js';
import type { StoredMessage } from '../conversations/schema.js';
import type { AnswerStreams, Follow, Sequenced } from './answer-streams.js';
import { userChannel, type UserEvent } from './channels.js';
import type { AnswerFrame, DoneFrame, ErrorFrame, MessageSendFrame } from './protocol.js';
import { doneFrame, threadHistory, TurnRetrieval } from './turn-inputs.js';
import { RunningAnswers } from './running-answers.js';
import { knowledgeSearchTool } from './tools/search.js';
import type { Tool } from './tools/types.js';
import { SearchGate } from './search-gate.js';
import { runTurn, TURN_LIMITS, type TurnLimits, type TurnOutcome } from './turn.js';
import {
  TURN_ORDER_LIMITS,
  TurnOrder,
  type PlaceInLine,
  type TurnOrderLimits,
} from './turn-order.js';
import { countTokens } from './usage.js';

export interface ChatLimits {
  /**
   * Answers generating or waiting for their turn at once per user, counted across instances
   * (a lease each in the key-value store, renewed while the answer runs).
   */
  maxActivePerUser: number;
  /** Passages retrieved for the question before the model runs. */
  passages: number;
  /** Earlier messages of the thread given to the model. */
  historyMessages: number;
  /** The knowledge-base search before the model runs; past it the turn goes on without passages. */
  retrievalTimeoutMs: number;
  /** Turns' searches running at once on this instance; the others queue (their wait counts). */
  concurrentSearches: number;
  /** How often an answer looks for a cancel that pub/sub did not deliver. */
  cancelPollMs: number;
  /** The order of turns on a branch; `leaseMs` is also the lifetime of a user's answer slot. */
  order: TurnOrderLimits;
  turn: TurnLimits;
}

export const CHAT_LIMITS: ChatLimits = {
  maxActivePerUser: 3,
  // The extractive model's refusal threshold was chosen with 8 passages a question (eval/README.md).
  passages: 8,
  historyMessages: 20,
  retrievalTimeoutMs: 5000,
  concurrentSearches: 4,
  cancelPollMs: 1000,
  order: TURN_ORDER_LIMITS,
  turn: TURN_LIMITS,
};

/** Where a turn's glossary comes from (the knowledge base's: glossary.ts). */
export interface GlossarySource {
  for(question: string): Promise<GlossaryEntry[]>;
}

export interface ChatDeps {
  messages: MessageService;
  search: SearchService;
  /** The knowledge base's definitions of what a question writes; none when absent. */
  glossary?: GlossarySource;
  llm: LlmProvider;
  /** Tools besides the knowledge-base search, e.g. the medical calculator. */
  tools: Tool[];
  streams: AnswerStreams;
  pubsub: PubSub;
  /** Answer slots, turn order and cancels, shared by the instances. */
  kv: KeyValueStore;
  metrics: Metrics;
  log: Logger;
  /** Lost dependencies: an answer that cannot be stored for one says SERVICE_UNAVAILABLE. */
  outages: Outages;
  limits?: ChatLimits;
}

/** What a `message_send` leads to: an answer to follow, or a turn that is already complete. */
export type SendOutcome = { follow: string } | { done: DoneFrame };

/** A `message_send` that has its answer slot and its place in the branch's line. */
export interface AdmittedTurn {
  userId: string;
  frame: MessageSendFrame;
  /** The answer's id, chosen now: it names the slot and the place too. */
  messageId: string;
  slot: Lease;
  place: PlaceInLine;
}

/** After admission: a turn to run, or the outcome of an earlier send of the same question. */
export type Admitted = { turn: AdmittedTurn } | { outcome: SendOutcome };

const slotsKey = (userId: string) => `chat:active:${userId}`;

/**
 * Chat turns (DECISIONS 4): stores the question, runs the answer detached from any socket (a
 * dropped socket does not stop it; only a cancel does, from any instance: `RunningAnswers`), streams its frames into
 * `AnswerStreams` for whoever follows it, and stores the answer with its citations and tool calls.
 * Turns on one branch take their turn in order (`TurnOrder`); a user's answers, running or
 * waiting, are counted across instances.
 */
export class ChatService {
  readonly turns: TurnOrder;
  private readonly limits: ChatLimits;
  private readonly answers: RunningAnswers;
  /** Sends waiting for their turn: shutdown stops them. */
  private readonly waiting = new Set<AbortController>();

  private readonly retrieval: TurnRetrieval;

  constructor(readonly deps: ChatDeps) {
    this.limits = deps.limits ?? CHAT_LIMITS;
    this.retrieval = new TurnRetrieval(
      deps.search,
      new SearchGate(this.limits.concurrentSearches),
      this.limits,
      deps.log,
    );
    this.turns = new TurnOrder(deps.kv, deps.pubsub, this.limits.order, deps.log);
    // A cancel published while this instance's subscriber was away is found in the store.
    this.answers = new RunningAnswers(deps.kv, deps.pubsub, this.limits.cancelPollMs);
  }

  async send(userId: string, frame: MessageSendFrame): Promise<SendOutcome> {
    return this.proceed(await this.admit(userId, frame));
  }

  /**
   * The first step of a `message_send`, quick: the conversation and branch exist, an earlier send
   * of the same `client_message_id` is answered from what it left, else the turn takes one of the
   * user's answer slots and a place at the end of its branch's line.
   */
  async admit(userId: string, frame: MessageSendFrame): Promise<Admitted> {
    const branchId = frame.branch_id ?? MAIN_BRANCH;
    const earlier = await this.deps.messages.sentBefore(
      userId,
      frame.conversation_id,
      branchId,
      frame.client_message_id ?? null,
    );
    if (earlier !== undefined) {
      const outcome = await this.earlierTurn(earlier);
      if (outcome !== undefined) return { outcome };
    }
    // Shed before anything is stored: a turn the knowledge base could not serve in time is
    // refused now, with when to try again, rather than answered without its passages.
    this.retrieval.admission();
    const messageId = randomUUID();
    const slot = await this.reserve(userId, messageId);
    try {
      const place = await this.turns.join(frame.conversation_id, branchId, messageId);
      return { turn: { userId, frame, messageId, slot, place } };
    } catch (err) {
      await slot.release();
      throw err;
    }
  }

  /**
   * The second step: waits until the turns before it on the branch have stored their answers,
   * stores the question after them and starts its answer.
   */
  async proceed(admitted: Admitted): Promise<SendOutcome> {
    if ('outcome' in admitted) return admitted.outcome;
    const { userId, frame, messageId, slot, place } = admitted.turn;
    const stop = new AbortController();
    this.waiting.add(stop);
    let started = false;
    try {
      if (!(await place.first(stop.signal)))
        throw serviceUnavailable('The service is shutting down');
      const stored = await this.deps.messages.append(userId, frame.conversation_id, {
        branchId: frame.branch_id ?? MAIN_BRANCH,
        role: 'user',
        content: frame.content,
        clientMessageId: frame.client_message_id ?? null,
        namesConversation: true,
      });
      if (!stored.created) {
        const earlier = await this.earlierTurn(stored.message);
        if (earlier !== undefined) return earlier;
      }
      await this.start(userId, stored.message, messageId, slot, place);
      started = true;
      return { follow: messageId };
    } finally {
      this.waiting.delete(stop);
      // A started answer gives its place and slot back when it is stored.
      if (!started) await Promise.all([place.release(), slot.release()]);
    }
  }

  /** One of the user's answer slots, shared by all instances. */
  private async reserve(userId: string, messageId: string): Promise<Lease> {
    const max = this.limits.maxActivePerUser;
    const slot = await Lease.take(
      this.deps.kv,
      slotsKey(userId),
      messageId,
      this.limits.order.leaseMs,
      max,
      this.deps.log,
    ).catch((err: unknown) => {
      this.deps.log.warn({ err }, 'answer slots could not be counted');
      throw serviceUnavailable('Questions cannot be taken right now; try again shortly');
    });
    if (slot === undefined) {
      throw new AppError(
        'RATE_LIMITED',
        `At most ${String(max)} answers can be generating or waiting at once`,
      );
    }
    return slot;
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

  /**
   * `message_cancel`, wherever the answer runs: at once when it runs here; else the cancel is
   * stored (the answer's instance looks for it every `cancelPollMs`) and published (it hears of
   * it at once unless its subscriber is away).
   */
  async cancel(userId: string, messageId: string): Promise<SendOutcome> {
    if (this.answers.cancelHere(userId, messageId)) return { follow: messageId };
    const outcome = await this.resume(userId, messageId).catch(storeUnavailable(this.deps.log));
    if ('follow' in outcome) {
      await this.answers.cancelElsewhere(userId, messageId).catch(storeUnavailable(this.deps.log));
    }
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
    for (const stop of this.waiting) stop.abort();
    await this.answers.close(timeoutMs);
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

  /** Opens the answer's stream and starts it; its place and slot are released once it is stored. */
  private async start(
    userId: string,
    question: StoredMessage,
    messageId: string,
    slot: Lease,
    place: PlaceInLine,
  ): Promise<void> {
    const { streams } = this.deps;
    const info = {
      messageId,
      userMessageId: question.id,
      userId,
      conversationId: question.conversationId,
    };
    await streams.open(info);
    // A store that lost everything (a restarted Redis) lost who the answer belongs to: it is said
    // again, so that a resume or cancel from another instance still finds it.
    slot.onRestored = () => {
      streams.open(info).catch(() => undefined);
    };
    await this.answers.start(
      info,
      [slot, place.lease],
      (signal) =>
        this.answer(userId, question, messageId, signal).catch((err: unknown) => {
          this.deps.log.error({ err, messageId }, 'chat turn failed');
        }),
      async () => {
        await Promise.all([place.release(), slot.release()]);
      },
    );
  }

  /**
   * For a turn that does not come through `admit` (the voice pipeline's): refuses it with
   * SERVICE_UNAVAILABLE when its search would miss the deadline at the gate's present pace, and
   * otherwise promises it a place, as `admit` does, for the question search `generate` makes.
   */
  admitSearch(): void {
    this.retrieval.admission();
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
    const { messages, metrics, llm } = this.deps;
    const startedAt = performance.now();
    // The history and the search at once: neither needs the other. The search never rejects
    // (without passages the turn goes on); a failed history read waits for it to end first.
    // Read once, for the search and the model; one that cannot be read leaves both without it.
    const glossary = this.glossaryFor(question.content);
    const searched = this.retrieval.forQuestion(
      question,
      emit,
      this.deps.glossary === undefined ? undefined : glossary,
    );
    const history = await threadHistory(
      messages,
      userId,
      question,
      this.limits.historyMessages,
    ).catch(async (err: unknown) => {
      await searched;
      throw err;
    });
    const passages = await searched;
    const outcome = await runTurn(
      llm,
      {
        userId,
        conversationId: question.conversationId,
        messageId,
        userMessageId: question.id,
        history,
        passages,
        glossary: await glossary,
        tools: [knowledgeSearchTool(this.retrieval.forTool, passages), ...this.deps.tools],
        signal,
        startedAt,
        emit,
      },
      this.limits.turn,
    );
    if (outcome.firstChunkMs !== undefined)
      metrics.chatFirstChunk.observe(outcome.firstChunkMs / 1000);
    countTokens(metrics, outcome.usage);
    return outcome;
  }

  /** The question's glossary entries; none when there is no glossary or it cannot be read. */
  private async glossaryFor(question: string): Promise<GlossaryEntry[]> {
    if (this.deps.glossary === undefined) return [];
    try {
      return await this.deps.glossary.for(question);
    } catch (err) {
      this.deps.log.warn({ err }, 'knowledge-base glossary not read; answering without it');
      return [];
    }
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
    // Whatever fails (the thread's history cannot be read, the answer cannot be stored), the
    // stream ends with an error frame: nobody following it is left waiting.
    try {
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
      const stored = await messages.appendAnswer(userId, question, messageId, outcome);
      const done = doneFrame(question, stored.message);
      emit(done);
      // The user's sockets that did not follow the answer hear of it too (socket hub).
      this.deps.pubsub.publish(userChannel(userId), {
        kind: 'done',
        frame: done,
      } satisfies UserEvent);
    } catch (err) {
      const log = this.deps.log.child({ messageId });
      const told = this.deps.outages.failure(
        err,
        log,
        'a chat answer failed',
        'The answer could not be completed',
      );
      emit({
        type: 'error',
        code: told.code as ErrorFrame['code'],
        message: told.message,
        request_ref: messageId,
      });
    } finally {
      streams.end(messageId);
    }
  }
}

const answerNotFound = () => new AppError('NOT_FOUND', 'Message not found');

/** A failure of the shared store (Redis) becomes SERVICE_UNAVAILABLE; the service's own errors pass. */
const storeUnavailable =
  (log: Logger) =>
  (err: unknown): never => {
    if (err instanceof AppError) throw err;
    log.warn({ err }, 'a chat cancel could not reach the shared store');
    throw serviceUnavailable('The answer cannot be cancelled right now; try again shortly');
  };
