import type { DoneFrame } from './protocol.js';

/**
 * The pub/sub channels the chat engine and the socket hub share across instances (names are
 * prefixed with REDIS_PREFIX on Redis). An answer's own frames go on `chat:answer:<id>`
 * (answer-streams.ts).
 */

/** What reaches every socket of a user, wherever it is connected. */
export type UserEvent =
  | { kind: 'typing'; from: string; conversation_id: string; active: boolean }
  /** A stored answer, for the user's sockets that did not follow it. */
  | { kind: 'done'; frame: DoneFrame };

export const userChannel = (userId: string) => `chat:user:${userId}`;

/** Cancels the answer on whichever instance generates it; the payload names the user. */
export const cancelChannel = (messageId: string) => `chat:cancel:${messageId}`;
