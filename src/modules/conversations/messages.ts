import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { BranchRow, MessageRole } from '../../db/schema/index.js';
import { AppError, notFound } from '../../errors.js';
import { messagesRepo, type NewMessage } from './messages-repo.js';
import { conversationsRepo } from './repo.js';
import type { CitationDto, StoredMessage, ToolCallDto, UsageDto } from './schema.js';
import { conversationNotFound } from './service.js';

export const MAIN_BRANCH = 'main';

export interface AppendInput {
  /** Default `main`. */
  branchId?: string;
  role: MessageRole;
  content: string;
  citations?: CitationDto[];
  toolCalls?: ToolCallDto[];
  /** The client's id for a turn: a second append with the same id on the branch stores nothing. */
  clientMessageId?: string | null;
  interrupted?: boolean;
  /** The model's token counts, for an answer (default null). */
  usage?: UsageDto | null;
  /** An id chosen in advance, e.g. announced while the answer was still streaming. */
  id?: string;
  /**
   * The message this one answers (an answer's own question); default: the branch's last message.
   * It must be a message of the conversation.
   */
  parentMessageId?: string;
  /**
   * A turn's question (chat or voice): an untitled conversation is named after it (one line, cut
   * to 80 characters).
   */
  namesConversation?: boolean;
}

export interface Appended {
  message: StoredMessage;
  /** False when `clientMessageId` named a message already on the branch, which is returned. */
  created: boolean;
}

export interface ThreadOptions {
  limit: number;
  /** Only messages older than this one, which must be on the thread. */
  before?: string | null | undefined;
}

const branchNotFound = () => notFound('Branch');

/**
 * Text from a model or a document may hold NUL, which PostgreSQL text and jsonb cannot store.
 * Users' text is refused with a 422 at the edge instead.
 */
const storable = (text: string) => text.replaceAll('\u0000', '\uFFFD');

/**
 * Messages and branches (DECISIONS 3): the one way turns are stored, used by the HTTP routes, the
 * chat socket and the voice pipeline. Appends to a conversation are serialised by its row lock,
 * so `messageCount`, `updatedAt`, the order of a thread and the parent links stay right however
 * many writers append at once.
 */
export class MessageService {
  constructor(private readonly db: Db) {}

  /**
   * Stores an answer to `question`, on its branch and with it as its parent, under the id it was
   * announced with while it streamed (chat and voice turns alike).
   */
  async appendAnswer(
    userId: string,
    question: StoredMessage,
    id: string,
    answer: Required<
      Pick<AppendInput, 'content' | 'citations' | 'toolCalls' | 'interrupted' | 'usage'>
    >,
  ): Promise<Appended> {
    return this.append(userId, question.conversationId, {
      content: answer.content,
      citations: answer.citations,
      toolCalls: answer.toolCalls,
      interrupted: answer.interrupted,
      usage: answer.usage,
      id,
      branchId: question.branchId,
      parentMessageId: question.id,
      role: 'assistant',
    });
  }

  /** Appends a message to the end of a branch's thread. */
  async append(userId: string, conversationId: string, input: AppendInput): Promise<Appended> {
    const branchId = input.branchId ?? MAIN_BRANCH;
    const clientMessageId = input.clientMessageId ?? null;
    const { outcome, message } = await messagesRepo.append(
      this.db,
      userId,
      {
        id: input.id ?? randomUUID(),
        conversationId,
        branchId,
        parentMessageId: input.parentMessageId ?? null,
        role: input.role,
        content: storable(input.content),
        citations: (input.citations ?? []).map((c) => ({
          ...c,
          title: storable(c.title),
          snippet: storable(c.snippet),
        })),
        toolCalls: input.toolCalls ?? [],
        clientMessageId,
        interrupted: input.interrupted ?? false,
        usage: input.usage ?? null,
      },
      input.namesConversation === true ? titleOf(input.content) : null,
    );
    if (outcome === 'no branch') throw branchNotFound();
    if (message === undefined) throw conversationNotFound();
    return { message, created: outcome === 'created' };
  }

  /**
   * Before a turn is sent: the conversation is the user's and has the branch (404 otherwise), and
   * the message already stored on the branch under `clientMessageId`, if any.
   */
  async sentBefore(
    userId: string,
    conversationId: string,
    branchId: string,
    clientMessageId: string | null,
  ): Promise<StoredMessage | undefined> {
    const found = await messagesRepo.sendTarget(
      this.db,
      userId,
      conversationId,
      branchId,
      clientMessageId,
    );
    if (found === undefined) throw conversationNotFound();
    if (!found.branchExists) throw branchNotFound();
    return found.existing ?? undefined;
  }

  /**
   * The message stored right after `message` on its branch, e.g. the answer to a user turn that a
   * repeated `client_message_id` named.
   */
  async replyTo(message: StoredMessage): Promise<StoredMessage | undefined> {
    return messagesRepo.next(this.db, message);
  }

  /** A message by id, if it is in one of the user's conversations. */
  async findOwned(userId: string, messageId: string): Promise<StoredMessage | undefined> {
    return messagesRepo.findOwned(this.db, userId, messageId);
  }

  /**
   * Forks the conversation after `parentMessageId`, a message on any branch of it. The fork's
   * thread is the parent's thread up to that message; `initialMessage` becomes its first user
   * message.
   */
  async fork(
    userId: string,
    conversationId: string,
    parentMessageId: string,
    initialMessage?: string,
  ): Promise<{ branch: BranchRow; message: StoredMessage | null }> {
    return this.db.transaction(async (tx) => {
      const fork = await messagesRepo.lockForFork(tx, userId, conversationId, parentMessageId);
      if (fork === undefined) throw conversationNotFound();
      if (fork.messageBranchId === null || fork.messageSeq === null) {
        throw new AppError('NOT_FOUND', 'Message not found in this conversation');
      }
      const branch = await messagesRepo.insertBranch(tx, {
        conversationId,
        id: randomUUID(),
        parentMessageId,
        parentBranchId: fork.messageBranchId,
        parentSeq: fork.messageSeq,
      });
      if (initialMessage === undefined) {
        await messagesRepo.touch(tx, conversationId, branch.createdAt);
        return { branch, message: null };
      }
      const first: NewMessage = {
        id: randomUUID(),
        conversationId,
        branchId: branch.id,
        seq: fork.lastSeq + 1,
        parentMessageId,
        role: 'user',
        content: initialMessage,
        citations: [],
        toolCalls: [],
        clientMessageId: null,
        interrupted: false,
        usage: null,
      };
      return { branch, message: await messagesRepo.insert(tx, first) };
    });
  }

  /**
   * The newest `limit` messages of a branch's thread, oldest first, and the thread's length. A
   * conversation of someone else, an unknown branch or a `before` not on the thread is a 404.
   */
  async thread(
    userId: string,
    conversationId: string,
    branchId: string,
    options: ThreadOptions,
  ): Promise<{ messages: StoredMessage[]; total: number }> {
    const before = options.before ?? null;
    const page = await messagesRepo.thread(
      this.db,
      userId,
      conversationId,
      branchId,
      options.limit,
      before,
    );
    if (!page.found) {
      const owned = await conversationsRepo.find(this.db, userId, conversationId);
      throw owned === undefined ? conversationNotFound() : branchNotFound();
    }
    if (!page.beforeFound) throw new AppError('NOT_FOUND', 'Message not found on this thread');
    return { messages: page.rows.reverse(), total: page.total };
  }
}

/** A conversation's title from its first question: one line, at most 80 characters. */
function titleOf(question: string): string | null {
  const line = question.replace(/\s+/g, ' ').trim();
  const graphemes = Array.from(new Intl.Segmenter().segment(line), (g) => g.segment);
  const title = graphemes.length <= 80 ? line : `${graphemes.slice(0, 79).join('').trimEnd()}…`;
  return title === '' ? null : title;
}
