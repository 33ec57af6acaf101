import { Envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import { callerOf, contextOf, type App } from '../../platform/http/types.js';
import type { BranchSummary } from './messages-repo.js';
import type { MessageService } from './messages.js';
import {
  Branch,
  BranchList,
  Conversation,
  ConversationIdParams,
  ConversationPage,
  CreateBody,
  CreateBranchBody,
  Deleted,
  ListQuery,
  Thread,
  ThreadQuery,
  UpdateBody,
  toConversationDto,
  toMessageDto,
  type BranchDto,
} from './schema.js';
import type { ConversationsService } from './service.js';

const tags = ['conversations'];
const notFound = (description: string) => ({ 404: errorResponse(description) });
const noConversation = notFound('No such conversation of the caller');

const toBranchDto = (b: BranchSummary): BranchDto => ({
  id: b.id,
  conversationId: b.conversationId,
  parentMessageId: b.parentMessageId,
  createdAt: b.createdAt.toISOString(),
  messageCount: b.messageCount,
  lastMessageAt: b.lastMessageAt?.toISOString() ?? null,
});

export function conversationsRoutes(
  app: App,
  deps: { conversations: ConversationsService; messages: MessageService },
): void {
  const { conversations, messages } = deps;
  const user = { config: { auth: 'user' as const } };

  app.get(
    '/conversations',
    {
      ...user,
      schema: {
        tags,
        operationId: 'listConversations',
        summary: 'Page of own conversations, most recently active first',
        querystring: ListQuery,
        response: { 200: Envelope(ConversationPage) },
      },
    },
    async (request) => {
      const { page, pageSize, archived, folderId } = request.query;
      const filter = { archived, folderId };
      const { rows, total } = await conversations.page(
        callerOf(request).id,
        filter,
        page,
        pageSize,
      );
      return ok(request, { items: rows.map(toConversationDto), total, page, pageSize });
    },
  );

  app.post(
    '/conversations',
    {
      ...user,
      schema: {
        tags,
        operationId: 'createConversation',
        summary: 'Start a conversation (with its main branch)',
        body: CreateBody,
        response: { 201: Envelope(Conversation) },
      },
    },
    async (request, reply) => {
      const { title, folder_id } = request.body;
      // Without a title, the first question asked on the chat socket becomes it.
      const row = await conversations.create(callerOf(request).id, {
        title: title ?? '',
        folderId: folder_id,
      });
      return reply.code(201).send(ok(request, toConversationDto(row)));
    },
  );

  app.get(
    '/conversations/:conversation_id',
    {
      ...user,
      schema: {
        tags,
        operationId: 'getConversation',
        summary: 'One own conversation',
        params: ConversationIdParams,
        response: { 200: Envelope(Conversation), ...noConversation },
      },
    },
    async (request) => {
      const row = await conversations.get(callerOf(request).id, request.params.conversation_id);
      return ok(request, toConversationDto(row));
    },
  );

  app.put(
    '/conversations/:conversation_id',
    {
      ...user,
      schema: {
        tags,
        operationId: 'updateConversation',
        summary: 'Change any of title, archived, folder_id (null removes the folder)',
        params: ConversationIdParams,
        body: UpdateBody,
        response: { 200: Envelope(Conversation), ...noConversation },
      },
    },
    async (request) => {
      const { title, archived, folder_id } = request.body;
      const patch = {
        ...(title === undefined ? {} : { title }),
        ...(archived === undefined ? {} : { archived }),
        ...(folder_id === undefined ? {} : { folderId: folder_id }),
      };
      const row = await conversations.update(
        callerOf(request).id,
        request.params.conversation_id,
        patch,
      );
      return ok(request, toConversationDto(row));
    },
  );

  app.delete(
    '/conversations/:conversation_id',
    {
      ...user,
      schema: {
        tags,
        operationId: 'deleteConversation',
        summary: 'Delete an own conversation with all its branches and messages',
        params: ConversationIdParams,
        response: { 200: Envelope(Deleted), ...noConversation },
      },
    },
    async (request) => {
      await conversations.delete(
        callerOf(request),
        request.params.conversation_id,
        contextOf(request),
      );
      return ok(request, { message: 'Conversation deleted' });
    },
  );

  app.post(
    '/conversations/:conversation_id/branches',
    {
      ...user,
      schema: {
        tags,
        operationId: 'createBranch',
        summary: 'Fork the conversation after a message of any of its branches',
        description:
          'The new branch’s thread is the thread of the branch holding `parent_message_id`, up to and including that message. `initial_message` is stored as its first user message.',
        params: ConversationIdParams,
        body: CreateBranchBody,
        response: {
          201: Envelope(Branch),
          ...notFound('No such conversation of the caller, or no such message in it'),
        },
      },
    },
    async (request, reply) => {
      const { parent_message_id, initial_message } = request.body;
      const { branch, message } = await messages.fork(
        callerOf(request).id,
        request.params.conversation_id,
        parent_message_id,
        initial_message,
      );
      const summary = {
        ...branch,
        messageCount: message === null ? 0 : 1,
        lastMessageAt: message?.createdAt ?? null,
      };
      return reply.code(201).send(ok(request, toBranchDto(summary)));
    },
  );

  app.get(
    '/conversations/:conversation_id/branches',
    {
      ...user,
      schema: {
        tags,
        operationId: 'listBranches',
        summary: 'Branches of an own conversation, main first, then oldest first',
        params: ConversationIdParams,
        response: { 200: Envelope(BranchList), ...noConversation },
      },
    },
    async (request) => {
      const rows = await conversations.branches(
        callerOf(request).id,
        request.params.conversation_id,
      );
      return ok(request, { items: rows.map(toBranchDto), total: rows.length });
    },
  );

  app.get(
    '/conversations/:conversation_id/messages',
    {
      ...user,
      schema: {
        tags,
        operationId: 'listMessages',
        summary: 'The thread of a branch, oldest first',
        description:
          'The newest `limit` messages of the branch’s whole thread (inherited messages included), oldest first; `before` pages further back. `total` is the length of the whole thread.',
        params: ConversationIdParams,
        querystring: ThreadQuery,
        response: {
          200: Envelope(Thread),
          ...notFound('No such conversation of the caller, branch, or `before` message'),
        },
      },
    },
    async (request) => {
      const { branch_id, limit, before } = request.query;
      const thread = await messages.thread(
        callerOf(request).id,
        request.params.conversation_id,
        branch_id,
        { limit, before },
      );
      return ok(request, {
        items: thread.messages.map(toMessageDto),
        total: thread.total,
        branchId: branch_id,
        limit,
      });
    },
  );
}
