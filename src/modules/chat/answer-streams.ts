import type { Redis } from 'ioredis';
import type { Logger } from '../../platform/logger.js';
import type { PubSub } from '../../platform/pubsub.js';
import type { AnswerFrame } from './protocol.js';

/** Who an answer belongs to; kept with its frames. */
export interface AnswerInfo {
  messageId: string;
  userMessageId: string;
  userId: string;
  conversationId: string;
}

/** A frame of an answer with its position in the answer's stream (from 1). */
export interface Sequenced {
  seq: number;
  frame: AnswerFrame;
}

export interface StreamLimits {
  /** How long an answer's frames stay after it ended (DECISIONS 4: at least 10 minutes). */
  keepAfterEndMs: number;
  /** The most frames kept per answer; older ones are trimmed (a replay then starts later). */
  maxFrames: number;
  /** The longest an unfinished answer is kept: bounds what a crashed instance leaves behind. */
  maxAnswerMs: number;
}

export const STREAM_LIMITS: StreamLimits = {
  keepAfterEndMs: 10 * 60_000,
  maxFrames: 20_000,
  maxAnswerMs: 60 * 60_000,
};

/**
 * The frames of answers being generated, kept so that a socket that dropped can catch up
 * (`message_resume`), on this instance or another. An answer's writer appends frames in order and
 * ends with a `message_done`; readers replay what is stored and then receive the rest live.
 */
export interface AnswerStreams {
  open(info: AnswerInfo): Promise<void>;
  /** Appends in order; never throws (a store that is down loses replay, not the live answer). */
  append(messageId: string, seq: number, frame: AnswerFrame): void;
  /** After the last frame: the answer is kept `keepAfterEndMs` more. */
  end(messageId: string): void;
  info(messageId: string): Promise<AnswerInfo | undefined>;
  /** The answer being generated for a user message, if one is. */
  answerTo(userMessageId: string): Promise<string | undefined>;
  /**
   * Delivers every stored frame with `seq > afterSeq`, then the live ones, in order, without gaps
   * or repeats, until `message_done` or the returned stop function. False when nothing is stored.
   */
  follow(messageId: string, afterSeq: number, onFrame: (s: Sequenced) => void): Promise<Follow>;
}

export type Follow = { found: false } | { found: true; stop: () => void };

const channel = (messageId: string) => `chat:answer:${messageId}`;

/**
 * Subscribes first, then reads what is stored, then delivers what arrived meanwhile: a frame
 * published between the read and the subscription can be neither lost nor repeated.
 */
async function followWith(
  pubsub: PubSub,
  messageId: string,
  afterSeq: number,
  onFrame: (s: Sequenced) => void,
  readStored: () => Promise<Sequenced[] | undefined>,
): Promise<Follow> {
  let last = afterSeq;
  let pending: Sequenced[] | null = [];
  let ended = false;
  const deliver = (s: Sequenced) => {
    if (ended || s.seq <= last) return;
    last = s.seq;
    if (s.frame.type === 'message_done') ended = true;
    onFrame(s);
    if (ended) unsubscribe();
  };
  const unsubscribe = await pubsub.subscribe(channel(messageId), (payload) => {
    const s = payload as Sequenced;
    if (pending === null) deliver(s);
    else pending.push(s);
  });
  const stored = await readStored().catch(() => undefined);
  if (stored === undefined) {
    unsubscribe();
    return { found: false };
  }
  for (const s of stored) deliver(s);
  const live = pending;
  pending = null;
  for (const s of live) deliver(s);
  return {
    found: true,
    stop: () => {
      ended = true;
      unsubscribe();
    },
  };
}

interface MemoryAnswer {
  info: AnswerInfo;
  frames: Sequenced[];
  timer: NodeJS.Timeout;
}

/** The embedded default: answers kept in this process. */
export function memoryAnswerStreams(pubsub: PubSub, limits = STREAM_LIMITS): AnswerStreams {
  const answers = new Map<string, MemoryAnswer>();
  const byUserMessage = new Map<string, string>();
  const expire = (messageId: string, ms: number) => {
    const timer = setTimeout(() => {
      const answer = answers.get(messageId);
      answers.delete(messageId);
      if (answer !== undefined) byUserMessage.delete(answer.info.userMessageId);
    }, ms);
    timer.unref();
    return timer;
  };
  return {
    open(info) {
      answers.set(info.messageId, {
        info,
        frames: [],
        timer: expire(info.messageId, limits.maxAnswerMs),
      });
      byUserMessage.set(info.userMessageId, info.messageId);
      return Promise.resolve();
    },
    append(messageId, seq, frame) {
      const answer = answers.get(messageId);
      if (answer === undefined) return;
      answer.frames.push({ seq, frame });
      if (answer.frames.length > limits.maxFrames) answer.frames.shift();
      pubsub.publish(channel(messageId), { seq, frame });
    },
    end(messageId) {
      const answer = answers.get(messageId);
      if (answer === undefined) return;
      clearTimeout(answer.timer);
      answer.timer = expire(messageId, limits.keepAfterEndMs);
      byUserMessage.delete(answer.info.userMessageId);
    },
    info: (messageId) => Promise.resolve(answers.get(messageId)?.info),
    answerTo: (userMessageId) => Promise.resolve(byUserMessage.get(userMessageId)),
    follow(messageId, afterSeq, onFrame) {
      return followWith(pubsub, messageId, afterSeq, onFrame, () => {
        const answer = answers.get(messageId);
        return Promise.resolve(answer === undefined ? undefined : [...answer.frames]);
      });
    },
  };
}

/**
 * With Redis: each answer is a Redis Stream (`chat:answer:<id>`, entry ids `0-<seq>`, trimmed to
 * `maxFrames`) beside a key with its owner (`…:info`); live frames also go out on the answer's
 * pub/sub channel. Both expire `keepAfterEndMs` after the end.
 */
export function redisAnswerStreams(
  redis: Redis,
  pubsub: PubSub,
  log: Logger,
  limits = STREAM_LIMITS,
): AnswerStreams {
  const key = (messageId: string) => `chat:answer:${messageId}`;
  const infoKey = (messageId: string) => `chat:answer:${messageId}:info`;
  const forKey = (userMessageId: string) => `chat:answer-to:${userMessageId}`;
  const warn = (err: unknown) => {
    log.warn({ err }, 'answer stream write failed; replay of this answer may be incomplete');
  };
  const info = async (messageId: string) => {
    const raw = await redis.get(infoKey(messageId));
    return raw === null ? undefined : (JSON.parse(raw) as AnswerInfo);
  };
  return {
    async open(info) {
      await redis
        .multi()
        .set(infoKey(info.messageId), JSON.stringify(info), 'PX', limits.maxAnswerMs)
        .set(forKey(info.userMessageId), info.messageId, 'PX', limits.maxAnswerMs)
        .exec();
    },
    append(messageId, seq, frame) {
      redis
        .xadd(
          key(messageId),
          'MAXLEN',
          '~',
          limits.maxFrames,
          `0-${String(seq)}`,
          'f',
          JSON.stringify(frame),
        )
        .catch(warn);
      if (seq === 1) redis.pexpire(key(messageId), limits.maxAnswerMs).catch(warn);
      pubsub.publish(channel(messageId), { seq, frame });
    },
    end(messageId) {
      void (async () => {
        const owner = await info(messageId);
        const tx = redis
          .multi()
          .pexpire(key(messageId), limits.keepAfterEndMs)
          .pexpire(infoKey(messageId), limits.keepAfterEndMs);
        if (owner !== undefined) tx.del(forKey(owner.userMessageId));
        await tx.exec();
      })().catch(warn);
    },
    info,
    async answerTo(userMessageId) {
      return (await redis.get(forKey(userMessageId))) ?? undefined;
    },
    follow(messageId, afterSeq, onFrame) {
      return followWith(pubsub, messageId, afterSeq, onFrame, async () => {
        if ((await redis.exists(infoKey(messageId))) === 0) return undefined;
        const entries = await redis.xrange(key(messageId), `0-${String(afterSeq + 1)}`, '+');
        return entries.map(([id, fields]) => ({
          seq: Number(id.slice(2)),
          frame: JSON.parse(fields[1] ?? 'null') as AnswerFrame,
        }));
      });
    },
  };
}
