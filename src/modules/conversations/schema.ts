import { Type, type Static } from 'typebox';
import type { ConversationRow, MessageRole } from '../../db/schema/index.js';
import { VisibleText } from '../../platform/http/text.js';
import { Uuid } from '../users/schema.js';

const Timestamp = Type.String({ format: 'date-time' });

/** The longest message a user may send, in UTF-16 code units. */
export const MAX_MESSAGE_CHARS = 32_000;

export const Title = VisibleText(200);
/** A folder is the client's own label for grouping conversations; the service does not manage folders. */
export const FolderId = VisibleText(128);
/** Message text: like a line, but tabs and line breaks are allowed. */
export const MessageText = Type.String({
  minLength: 1,
  maxLength: MAX_MESSAGE_CHARS,
  pattern:
    '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f\\ud800-\\udfff]*' +
    '[^\\s\\u0000-\\u001f\\u007f\\ud800-\\udfff]' +
    '[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f\\ud800-\\udfff]*$',
});
/**
 * `main` or a fork's UUID; any other value without control characters names no branch and
 * answers 404.
 */
export const BranchId = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]+$',
});

export const Conversation = Type.Object({
  id: Uuid,
  userId: Uuid,
  title: Type.String(),
  archived: Type.Boolean(),
  messageCount: Type.Integer(),
  folderId: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type ConversationDto = Static<typeof Conversation>;

export const ConversationPage = Type.Object({
  items: Type.Array(Conversation),
  total: Type.Integer(),
  page: Type.Integer(),
  pageSize: Type.Integer(),
});

export const Citation = Type.Object({
  index: Type.Integer({ minimum: 1 }),
  documentId: Type.String(),
  docKey: Type.String(),
  title: Type.String(),
  version: Type.Integer(),
  chunkId: Type.String(),
  page: Type.Union([Type.Integer(), Type.Null()]),
  snippet: Type.String(),
  score: Type.Number({ minimum: 0, maximum: 1 }),
});
export type CitationDto = Static<typeof Citation>;

/** A tool the assistant ran during a turn, in the order they ran (DECISIONS 3). */
export const ToolCall = Type.Object({
  id: Type.String(),
  name: Type.String(),
  arguments: Type.Record(Type.String(), Type.Unknown()),
  result: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
  durationMs: Type.Integer({ minimum: 0 }),
});
export type ToolCallDto = Static<typeof ToolCall>;

/**
 * The language model's token counts for an assistant message, summed over the turn's model calls
 * (a turn with tools calls the model once per round), as the model reported them. Null when it
 * reported none: user messages, the offline extractive model (it has no tokens to count), servers
 * that send no usage, and turns stopped before any call finished.
 */
export const MessageUsage = Type.Object({
  provider: Type.String({ description: 'The language model provider, e.g. `openai`' }),
  model: Type.String({ description: 'The model the service asked for (LLM_MODEL)' }),
  inputTokens: Type.Integer({ minimum: 0, description: 'Prompt tokens, every call of the turn' }),
  outputTokens: Type.Integer({
    minimum: 0,
    description: 'Completion tokens, every call of the turn',
  }),
});
export type UsageDto = Static<typeof MessageUsage>;

export const Message = Type.Object({
  id: Uuid,
  conversationId: Uuid,
  branchId: Type.String(),
  parentMessageId: Type.Union([Uuid, Type.Null()]),
  role: Type.Union([
    Type.Literal('user'),
    Type.Literal('assistant'),
    Type.Literal('system'),
    Type.Literal('tool'),
  ]),
  content: Type.String(),
  citations: Type.Array(Citation),
  toolCalls: Type.Array(ToolCall),
  clientMessageId: Type.Union([Type.String(), Type.Null()]),
  interrupted: Type.Boolean(),
  usage: Type.Union([MessageUsage, Type.Null()], {
    description:
      'Tokens the language model reported for this answer; null on other roles and when it reported none',
  }),
  createdAt: Timestamp,
});
export type MessageDto = Static<typeof Message>;

export const Thread = Type.Object({
  items: Type.Array(Message),
  total: Type.Integer({ description: 'Messages on the whole thread of the branch' }),
  branchId: Type.String(),
  limit: Type.Integer(),
});

export const Branch = Type.Object({
  id: Type.String(),
  conversationId: Uuid,
  parentMessageId: Type.Union([Uuid, Type.Null()]),
  createdAt: Timestamp,
  messageCount: Type.Integer({ description: 'Messages stored on this branch itself' }),
  lastMessageAt: Type.Union([Timestamp, Type.Null()]),
});
export type BranchDto = Static<typeof Branch>;

export const BranchList = Type.Object({ items: Type.Array(Branch), total: Type.Integer() });

export const ConversationIdParams = Type.Object(
  { conversation_id: Uuid },
  { additionalProperties: false },
);

export const ListQuery = Type.Object(
  {
    page: Type.Integer({ minimum: 1, maximum: 100_000, default: 1 }),
    pageSize: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    archived: Type.Optional(Type.Boolean()),
    folderId: Type.Optional(FolderId),
  },
  { additionalProperties: false },
);

export const CreateBody = Type.Object(
  {
    title: Type.Optional(Title),
    folder_id: Type.Optional(Type.Union([FolderId, Type.Null()])),
  },
  { additionalProperties: false },
);

export const UpdateBody = Type.Object(
  {
    title: Type.Optional(Title),
    archived: Type.Optional(Type.Boolean()),
    folder_id: Type.Optional(Type.Union([FolderId, Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const CreateBranchBody = Type.Object(
  { parent_message_id: Uuid, initial_message: Type.Optional(MessageText) },
  { additionalProperties: false },
);

export const ThreadQuery = Type.Object(
  {
    branch_id: Type.String({ ...BranchId, default: 'main' }),
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
    before: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const Deleted = Type.Object({ message: Type.String() });

export function toConversationDto(row: ConversationRow): ConversationDto {
  return {
    id: row.id,
    userId: row.userId,
    title: row.title,
    archived: row.archived,
    messageCount: row.messageCount,
    folderId: row.folderId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** A stored message as the services hand it around. */
export interface StoredMessage {
  id: string;
  conversationId: string;
  branchId: string;
  seq: number;
  parentMessageId: string | null;
  role: MessageRole;
  content: string;
  citations: CitationDto[];
  toolCalls: ToolCallDto[];
  clientMessageId: string | null;
  interrupted: boolean;
  usage: UsageDto | null;
  createdAt: Date;
}

export function toMessageDto(m: StoredMessage): MessageDto {
  return {
    id: m.id,
    conversationId: m.conversationId,
    branchId: m.branchId,
    parentMessageId: m.parentMessageId,
    role: m.role,
    content: m.content,
    citations: m.citations,
    toolCalls: m.toolCalls,
    clientMessageId: m.clientMessageId,
    interrupted: m.interrupted,
    usage: m.usage,
    createdAt: m.createdAt.toISOString(),
  };
}
