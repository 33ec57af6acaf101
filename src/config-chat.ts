import { Type, type Static } from 'typebox';

/**
 * The chat socket's limits (DECISIONS 4, issue 10). Declared here to keep config.ts readable;
 * config.ts reads and validates them with everything else.
 */
export const ChatEnv = {
  CHAT_SENDS_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 100_000, default: 30 }),
  CHAT_MAX_ACTIVE_ANSWERS: Type.Integer({ minimum: 1, maximum: 1000, default: 3 }),
  CHAT_CONCURRENT_SEARCHES: Type.Integer({ minimum: 1, maximum: 1000, default: 4 }),
  CHAT_ANSWER_LEASE_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 30_000 }),
  CHAT_TURN_WAIT_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 120_000 }),
  WS_MAX_SOCKETS_PER_USER: Type.Integer({ minimum: 1, maximum: 100_000, default: 20 }),
  WS_IDLE_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 90_000 }),
  WS_MAX_FRAME_BYTES: Type.Integer({ minimum: 1024, maximum: 1024 * 1024, default: 64 * 1024 }),
  WS_SEND_BUFFER_BYTES: Type.Integer({
    minimum: 64 * 1024,
    maximum: 256 * 1024 * 1024,
    default: 1024 * 1024,
  }),
};

type ChatEnvValues = Static<ReturnType<typeof Type.Object<typeof ChatEnv>>>;

export interface ChatSettings {
  chat: {
    sendsPerMinute: number;
    maxActiveAnswers: number;
    concurrentSearches: number;
    /** Lifetime of an answer's slot and of a turn's place in its branch's line (renewed). */
    answerLeaseMs: number;
    /** The longest a turn waits for the turns before it on its branch. */
    turnWaitMs: number;
    maxSocketsPerUser: number;
    idleTimeoutMs: number;
    maxFrameBytes: number;
    sendBufferBytes: number;
  };
}

export function chatConfig(env: ChatEnvValues): ChatSettings {
  return {
    chat: {
      sendsPerMinute: env.CHAT_SENDS_PER_MINUTE,
      maxActiveAnswers: env.CHAT_MAX_ACTIVE_ANSWERS,
      concurrentSearches: env.CHAT_CONCURRENT_SEARCHES,
      answerLeaseMs: env.CHAT_ANSWER_LEASE_MS,
      turnWaitMs: env.CHAT_TURN_WAIT_MS,
      maxSocketsPerUser: env.WS_MAX_SOCKETS_PER_USER,
      idleTimeoutMs: env.WS_IDLE_TIMEOUT_MS,
      maxFrameBytes: env.WS_MAX_FRAME_BYTES,
      sendBufferBytes: env.WS_SEND_BUFFER_BYTES,
    },
  };
}
