import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import type { Chaos } from '../../platform/chaos.js';
import type { KeyValueStore } from '../../platform/kv.js';
import type { Logger } from '../../platform/logger.js';
import type { Metrics } from '../../platform/metrics.js';
import type { Outages } from '../../platform/outages.js';
import { chaosStt, chaosTts } from '../../providers/chaos.js';
import { createStt, isAdaptable } from '../../providers/stt/index.js';
import { KB_MODEL_WEIGHT } from '../../providers/stt/kb-adapted.js';
import type { SttProvider } from '../../providers/stt/types.js';
import { createTts } from '../../providers/tts/index.js';
import type { TtsProvider } from '../../providers/tts/types.js';
import type { SocketTracker } from '../admin/socket-registry.js';
import type { AuthService } from '../auth/service.js';
import type { ChatService } from '../chat/service.js';
import type { MessageService } from '../conversations/messages.js';
import type { ConversationsService } from '../conversations/service.js';
import { VOICE_LIMITS, type VoiceDeps } from './deps.js';
import { VOICE_PATHS, VoiceHub } from './hub.js';
import { KnowledgeLanguageModel, type KbModelStatus } from './kb-model.js';
import { LazyStt } from './lazy-stt.js';
import { VoiceSessions } from './sessions.js';
import { createVoiceActivityDetector } from './vad/detector.js';
import { sileroModelOwner } from './vad/silero.js';

export interface Voice {
  deps: VoiceDeps;
  hub: VoiceHub;
  /** Whether the recognizer exists (it is created when the first utterance needs it). */
  sttLoaded(): boolean;
  /** The recognizer's knowledge-base model: undefined until the recognizer exists and one is built. */
  kbModel(): KbModelStatus | undefined;
  /** Checks the knowledge base now (it is polled every minute) and rebuilds the model if it changed. */
  refreshKbModel(): Promise<void>;
  /** Routes an HTTP upgrade to the voice socket; false when the path is not one of its own. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  close(): Promise<void>;
}

export interface VoiceWiring {
  config: Config;
  log: Logger;
  metrics: Metrics;
  kv: KeyValueStore;
  db: Db;
  auth: AuthService;
  chat: ChatService;
  messages: MessageService;
  conversations: ConversationsService;
  /** Told of every socket that opens or closes. */
  sockets: SocketTracker;
  /** Other providers (tests). */
  stt?: SttProvider;
  tts?: TtsProvider;
  /** Fault injection: when enabled, speech recognition and synthesis are wrapped. */
  chaos: Chaos;
  outages: Outages;
}

const KB_MODEL_POLL_MS = 60_000;
const KB_MODEL_MAX_CHARS = 64 * 1024 * 1024;

export function createVoice(w: VoiceWiring): Voice {
  const { config, log } = w;
  const v = config.voice;
  let kbModel: KnowledgeLanguageModel | undefined;
  const baseStt =
    w.stt ??
    new LazyStt(
      v.stt.provider,
      () => createStt(sttConfig(config)),
      (created) => {
        if (!v.stt.adaptToKnowledgeBase || !isAdaptable(created)) return;
        kbModel = new KnowledgeLanguageModel({
          db: w.db,
          stt: created,
          log,
          dir: join(config.dataDir, 'voice'),
          weight: KB_MODEL_WEIGHT,
          pollMs: KB_MODEL_POLL_MS,
          maxChars: KB_MODEL_MAX_CHARS,
          outages: w.outages,
        });
        kbModel.start();
      },
    );
  const stt = chaosStt(baseStt, w.chaos);
  const tts = chaosTts(
    w.tts ??
      createTts({
        provider: v.tts.provider,
        voice: v.tts.voice,
        model: v.tts.model,
        timeoutMs: v.tts.timeoutMs,
        baseUrl: v.openai.baseUrl,
        apiKey: v.openai.apiKey,
      }),
    w.chaos,
  );
  const silero = sileroModelOwner();
  const deps: VoiceDeps = {
    chat: w.chat,
    messages: w.messages,
    conversations: w.conversations,
    sessions: new VoiceSessions(w.kv, w.conversations, v.sessionTtlSeconds * 1000),
    stt,
    tts,
    createVad: (settings) => createVoiceActivityDetector(settings, { loadModel: silero.load }),
    warm: () => {
      if (baseStt instanceof LazyStt) baseStt.warm();
    },
    metrics: w.metrics,
    log,
    outages: w.outages,
    limits: {
      ...VOICE_LIMITS,
      maxUtteranceMs: v.maxUtteranceMs,
      outputSampleRate: v.outputSampleRate,
    },
  };
  const hub = new VoiceHub(
    deps,
    w.auth,
    {
      maxSessionsPerUser: v.maxSessionsPerUser,
      maxSessions: v.maxSessions,
      maxFrameBytes: config.chat.maxFrameBytes,
      sendBufferBytes: config.chat.sendBufferBytes,
      idleMs: v.idleTimeoutMs,
      maxPendingAudioBytes: 10 * 32_000,
    },
    w.sockets,
  );
  return {
    deps,
    hub,
    sttLoaded: () => !(baseStt instanceof LazyStt) || baseStt.created !== undefined,
    kbModel: () => kbModel?.status,
    refreshKbModel: async () => {
      await kbModel?.refresh();
    },
    upgrade(req, socket, head) {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const endpoint = VOICE_PATHS.find((p) => p === path);
      if (endpoint === undefined) return false;
      hub.upgrade(req, socket, head, endpoint);
      return true;
    },
    async close() {
      await hub.close();
      await kbModel?.close();
      await Promise.allSettled([stt.close(), tts.close(), silero.release()]);
    },
  };
}

function sttConfig(config: Config) {
  const { stt, openai } = config.voice;
  if (stt.provider === 'openai') {
    return {
      provider: 'openai' as const,
      baseUrl: openai.baseUrl,
      apiKey: openai.apiKey,
      model: stt.model,
      timeoutMs: stt.timeoutMs,
    };
  }
  // An utterance may wait for a decoder as long as one can last (its audio queues meanwhile):
  // under a burst it is late, not lost.
  return {
    provider: 'pocketsphinx' as const,
    poolSize: stt.poolSize,
    acquireTimeoutMs: config.voice.maxUtteranceMs + 5000,
  };
}
