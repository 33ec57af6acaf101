import { randomUUID } from 'node:crypto';
import { AppError } from '../../errors.js';
import type { KeyValueStore } from '../../platform/kv.js';
import type { ConversationsService } from '../conversations/service.js';
import type { SessionUpdateFrame, SessionView } from './protocol.js';
import type { TurnDetection } from './vad/types.js';

/**
 * Voice sessions (`POST /api/voice/session`): a session's settings, kept in the key-value store
 * (Redis when configured) until it expires, so the socket that opens it may land on any instance.
 * A socket opened without a session gets the defaults; `session.update` changes either.
 */

export interface VoiceSettings {
  conversationId: string | null;
  voice: string | null;
  language: string;
  bargeIn: boolean;
  turnDetection: TurnDetection;
}

export interface VoiceSessionRecord extends VoiceSettings {
  id: string;
  userId: string;
  expiresAt: string;
}

export const DEFAULT_SETTINGS: VoiceSettings = {
  conversationId: null,
  voice: null,
  language: 'en',
  bargeIn: true,
  turnDetection: { silenceMs: 500, minSpeechMs: 200, threshold: 0.5, prerollMs: 300 },
};

type SettingsInput = Omit<SessionUpdateFrame, 'type' | 'request_ref'>;

export class VoiceSessions {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly conversations: ConversationsService,
    private readonly ttlMs: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** A new session; its conversation is checked, or created when none is given. */
  async create(userId: string, input: SettingsInput): Promise<VoiceSessionRecord> {
    const settings = await this.apply(userId, DEFAULT_SETTINGS, input);
    const conversationId =
      settings.conversationId ?? (await this.conversations.create(userId, { title: '' })).id;
    const record: VoiceSessionRecord = {
      ...settings,
      conversationId,
      id: randomUUID(),
      userId,
      expiresAt: new Date(this.now().getTime() + this.ttlMs).toISOString(),
    };
    await this.kv.put(key(record.id), JSON.stringify(record), this.ttlMs);
    return record;
  }

  /** The caller's unexpired session; anyone else's is not found. */
  async find(userId: string, id: string): Promise<VoiceSessionRecord> {
    const text = await this.kv.get(key(id));
    const record = text === undefined ? undefined : (JSON.parse(text) as VoiceSessionRecord);
    if (record?.userId !== userId) throw new AppError('NOT_FOUND', 'Voice session not found');
    return record;
  }

  /** Settings changed by `session.update` (or a new session's body); the conversation must be the user's. */
  async apply(userId: string, base: VoiceSettings, input: SettingsInput): Promise<VoiceSettings> {
    if (input.conversation_id !== undefined) {
      await this.conversations.get(userId, input.conversation_id);
    }
    const td = input.turn_detection;
    return {
      conversationId: input.conversation_id ?? base.conversationId,
      voice: input.voice ?? base.voice,
      language: input.language ?? base.language,
      bargeIn: input.barge_in ?? base.bargeIn,
      turnDetection: {
        silenceMs: td?.silence_ms ?? base.turnDetection.silenceMs,
        minSpeechMs: td?.min_speech_ms ?? base.turnDetection.minSpeechMs,
        threshold: td?.threshold ?? base.turnDetection.threshold,
        prerollMs: base.turnDetection.prerollMs,
      },
    };
  }
}

export function sessionView(id: string, s: VoiceSettings): SessionView {
  return {
    session_id: id,
    conversation_id: s.conversationId,
    voice: s.voice,
    language: s.language,
    barge_in: s.bargeIn,
    turn_detection: {
      silence_ms: s.turnDetection.silenceMs,
      min_speech_ms: s.turnDetection.minSpeechMs,
      threshold: s.turnDetection.threshold,
    },
  };
}

const key = (id: string) => `voice:session:${id}`;
