import { Type, type Static, type TProperties } from 'typebox';
import { frameParser, type Parsed as ParsedFrame } from '../../platform/ws/frames.js';
import {
  BranchId,
  MessageText,
  type MessageDto,
  type ToolCallDto,
} from '../conversations/schema.js';
import { Uuid } from '../users/schema.js';

/**
 * The chat socket protocol (DECISIONS 4), one file: every frame a client may send, as a schema
 * checked before anything acts on it, and every frame the server sends, as a discriminated union.
 */

export const PROTOCOL_VERSION = '1.0';

/** A client's own reference for a frame, echoed on the `error` it causes. */
const RequestRef = Type.Optional(Type.String({ minLength: 1, maxLength: 128 }));
const ClientMessageId = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]+$',
});

const frame = <K extends string, T extends TProperties>(type: K, fields: T) =>
  Type.Object(
    { type: Type.Literal(type), request_ref: RequestRef, ...fields },
    { additionalProperties: false },
  );

export const MessageSend = frame('message_send', {
  conversation_id: Uuid,
  content: MessageText,
  branch_id: Type.Optional(BranchId),
  client_message_id: Type.Optional(ClientMessageId),
});
export const MessageCancel = frame('message_cancel', { message_id: Uuid });
export const MessageResume = frame('message_resume', {
  message_id: Uuid,
  after_index: Type.Optional(Type.Integer({ minimum: -1, maximum: 1_000_000_000 })),
});
export const TypingStart = frame('typing_start', { conversation_id: Uuid });
export const TypingStop = frame('typing_stop', { conversation_id: Uuid });
export const Ping = frame('ping', {
  ts: Type.Optional(
    Type.Union([Type.Number(), Type.String({ maxLength: 64 })], { description: 'echoed' }),
  ),
});

export type MessageSendFrame = Static<typeof MessageSend>;
export type MessageCancelFrame = Static<typeof MessageCancel>;
export type MessageResumeFrame = Static<typeof MessageResume>;
export type TypingFrame = Static<typeof TypingStart> | Static<typeof TypingStop>;
export type PingFrame = Static<typeof Ping>;
export type ClientFrame =
  MessageSendFrame | MessageCancelFrame | MessageResumeFrame | TypingFrame | PingFrame;

const SCHEMAS: Record<ClientFrame['type'], object> = {
  message_send: MessageSend,
  message_cancel: MessageCancel,
  message_resume: MessageResume,
  typing_start: TypingStart,
  typing_stop: TypingStop,
  ping: Ping,
};

export type ErrorCode =
  | 'UNAUTHORIZED'
  | 'NOT_FOUND'
  | 'VALIDATION_ERROR'
  | 'RATE_LIMITED'
  | 'PAYLOAD_TOO_LARGE'
  | 'CONFLICT'
  | 'INTERNAL_ERROR'
  | 'SERVICE_UNAVAILABLE'
  | 'LLM_ERROR'
  | 'KB_TIMEOUT'
  | 'TOOL_ERROR';

export interface ChunkFrame {
  type: 'chunk';
  conversation_id: string;
  message_id: string;
  user_message_id: string;
  index: number;
  delta: string;
}
export interface ToolFrame {
  type: 'tool_call' | 'tool_result';
  conversation_id: string;
  message_id: string;
  call: ToolCallDto;
}
export interface DoneFrame {
  type: 'message_done';
  conversation_id: string;
  user_message: MessageDto;
  message: MessageDto;
}
export interface ErrorFrame {
  type: 'error';
  code: ErrorCode;
  message: string;
  request_ref?: string;
  /**
   * As on the voice socket: false when the server closes the socket after this frame, else true
   * (the socket stays open; a SERVICE_UNAVAILABLE or RATE_LIMITED request may be sent again
   * later). Sent on every error frame; the connection sets it when absent.
   */
  recoverable?: boolean;
  /** When the request may be sent again, in ms (a SERVICE_UNAVAILABLE of a busy knowledge base). */
  retry_after_ms?: number;
}
/** What an answer's stream carries, in order: replayed as it was on `message_resume`. */
export type AnswerFrame = ChunkFrame | ToolFrame | DoneFrame | ErrorFrame;

export type ServerFrame =
  | AnswerFrame
  | {
      type: 'connected';
      connection_id: string;
      user_id: string;
      protocol_version: string;
      server_time: string;
    }
  | { type: 'typing'; conversation_id: string; user_id: string; active: boolean }
  | { type: 'pong'; ts: number | string | null };

export type Parsed = ParsedFrame<ClientFrame>;

/** Parses and checks one text frame; never throws. */
export const parseClientFrame: (text: string) => Parsed = frameParser<ClientFrame>(SCHEMAS);
