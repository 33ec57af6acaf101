import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Redis } from 'ioredis';
import type { Config } from '../../config.js';
import type { Chaos } from '../../platform/chaos.js';
import type { KeyValueStore } from '../../platform/kv.js';
import type { Logger } from '../../platform/logger.js';
import type { Metrics } from '../../platform/metrics.js';
import type { Outages } from '../../platform/outages.js';
import type { PubSub } from '../../platform/pubsub.js';
import type { RateLimiter } from '../../platform/rate-limit.js';
import { chaosLlm } from '../../providers/chaos.js';
import { ExtractiveProvider } from '../../providers/llm/extractive.js';
import { createLlmProvider } from '../../providers/llm/index.js';
import type { LlmProvider } from '../../providers/llm/types.js';
import type { SocketTracker } from '../admin/socket-registry.js';
import type { AuthService } from '../auth/service.js';
import type { MessageService } from '../conversations/messages.js';
import type { EhrService } from '../ehr/service.js';
import type { SearchService } from '../knowledge/search.js';
import { memoryAnswerStreams, redisAnswerStreams } from './answer-streams.js';
import { CHAT_PATHS, SOCKET_LIMITS, SocketHub } from './hub.js';
import { CHAT_LIMITS, ChatService, type GlossarySource } from './service.js';
import { medicalCalculatorTool } from './tools/calculator/index.js';
import { ehrToolsIfConfigured } from './tools/ehr.js';
import type { Tool } from './tools/types.js';

export interface Chat {
  service: ChatService;
  hub: SocketHub;
  llm: LlmProvider;
  pubsub: PubSub;
  /** The tools the model may call (besides the knowledge search every turn gets). */
  tools: readonly Tool[];
  /** Routes an HTTP upgrade to its socket endpoint; false when the path has none. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  close(timeoutMs: number): Promise<void>;
}

export interface ChatWiring {
  config: Config;
  log: Logger;
  metrics: Metrics;
  redis: Redis | undefined;
  /** Answer slots, turn order and cancels shared by the instances (Redis or in-process). */
  kv: KeyValueStore;
  auth: AuthService;
  messages: MessageService;
  search: SearchService;
  /** The knowledge base's definitions of what a question writes, for the model. */
  glossary?: GlossarySource;
  rateLimiter: RateLimiter;
  /** The instances' shared channels (owned by the caller, which closes them). */
  pubsub: PubSub;
  /** Told of every socket that opens or closes. */
  sockets: SocketTracker;
  /** The EHR: its tools are offered when it is configured. */
  ehr?: EhrService;
  /** Another model (tests). */
  llm?: LlmProvider;
  /** Fault injection: when enabled, the model is wrapped (its faults are provider failures). */
  chaos: Chaos;
  outages: Outages;
}

/** The chat engine and its sockets, on Redis when configured, else in-process. */
export function createChat(w: ChatWiring): Chat {
  const { config, log, redis } = w;
  const { pubsub } = w;
  const streams =
    redis === undefined ? memoryAnswerStreams(pubsub) : redisAnswerStreams(redis, pubsub, log);
  const llm = chaosLlm(
    w.llm ?? createLlmProvider(config.llm, { extractive: () => new ExtractiveProvider() }),
    w.chaos,
  );
  const tools = [medicalCalculatorTool, ...ehrToolsIfConfigured(w.ehr)];
  const service = new ChatService({
    messages: w.messages,
    search: w.search,
    ...(w.glossary === undefined ? {} : { glossary: w.glossary }),
    llm,
    tools,
    streams,
    pubsub,
    kv: w.kv,
    metrics: w.metrics,
    log,
    outages: w.outages,
    limits: {
      ...CHAT_LIMITS,
      maxActivePerUser: config.chat.maxActiveAnswers,
      concurrentSearches: config.chat.concurrentSearches,
      order: {
        ...CHAT_LIMITS.order,
        leaseMs: config.chat.answerLeaseMs,
        waitMs: config.chat.turnWaitMs,
      },
    },
  });
  const hub = new SocketHub({
    auth: w.auth,
    chat: service,
    pubsub,
    rateLimiter: config.rateLimit.enabled ? w.rateLimiter : null,
    metrics: w.metrics,
    sockets: w.sockets,
    log,
    outages: w.outages,
    limits: {
      ...SOCKET_LIMITS,
      maxFrameBytes: config.chat.maxFrameBytes,
      sendBufferBytes: config.chat.sendBufferBytes,
      idleMs: config.chat.idleTimeoutMs,
      maxSocketsPerUser: config.chat.maxSocketsPerUser,
      sendsPerMinute: config.chat.sendsPerMinute,
    },
  });
  return {
    service,
    hub,
    llm,
    pubsub,
    tools,
    upgrade(req, socket, head) {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const endpoint = CHAT_PATHS.find((p) => p === path);
      if (endpoint === undefined) return false;
      hub.upgrade(req, socket, head, endpoint);
      return true;
    },
    async close(timeoutMs) {
      await hub.close();
      // Running answers may finish (and be stored) within the deadline, else stop as interrupted.
      await service.close(timeoutMs);
    },
  };
}
