import type { Logger } from '../../platform/logger.js';
import type { Metrics } from '../../platform/metrics.js';
import type { Outages } from '../../platform/outages.js';
import type { SttProvider } from '../../providers/stt/types.js';
import type { TtsProvider } from '../../providers/tts/types.js';
import type { ChatService } from '../chat/service.js';
import type { MessageService } from '../conversations/messages.js';
import type { ConversationsService } from '../conversations/service.js';
import type { VoiceSessions } from './sessions.js';
import type { TurnDetection, VoiceActivityDetector } from './vad/types.js';

/** Bounds of the voice pipeline (docs/operations.md "Voice"). */
export interface VoiceLimits {
  /** One utterance at most this long; the rest of it is not heard. */
  maxUtteranceMs: number;
  /** How far audio may run ahead of the listener's playback. */
  playbackLeadMs: number;
  /** The rate of `audio.output`. */
  outputSampleRate: number;
  /** After a barge-in, how long the server waits for the client's `response.truncate`. */
  truncateGraceMs: number;
  /** Audio kept while nobody speaks, for an `audio.commit` the detector heard no speech in. */
  commitWindowMs: number;
}

export const VOICE_LIMITS: VoiceLimits = {
  maxUtteranceMs: 30_000,
  playbackLeadMs: 1000,
  outputSampleRate: 16_000,
  truncateGraceMs: 250,
  commitWindowMs: 10_000,
};

export interface VoiceDeps {
  chat: ChatService;
  messages: MessageService;
  conversations: ConversationsService;
  sessions: VoiceSessions;
  stt: SttProvider;
  tts: TtsProvider;
  createVad(settings: TurnDetection): VoiceActivityDetector;
  /** Readies what a session will need (the recognizer's decoders) when a socket opens. */
  warm(): void;
  metrics: Metrics;
  log: Logger;
  /** Lost dependencies: what a failed frame or turn is told (SERVICE_UNAVAILABLE), logged once. */
  outages: Outages;
  limits: VoiceLimits;
}
