import { Type, type Static, type TProperties } from 'typebox';
import { frameParser, type Parsed } from '../../platform/ws/frames.js';
import type { ErrorCode } from '../chat/protocol.js';
import type { CitationDto } from '../conversations/schema.js';
import { MessageText } from '../conversations/schema.js';
import { Uuid } from '../users/schema.js';
import type { VoiceState } from './state.js';

/**
 * The voice socket protocol (DECISIONS 5), one file: the frames a client may send, as schemas
 * checked before anything acts on them, and the frames the server sends, as a discriminated union.
 */

const RequestRef = Type.Optional(Type.String({ minLength: 1, maxLength: 128 }));

const frame = <K extends string, T extends TProperties>(type: K, fields: T) =>
  Type.Object(
    { type: Type.Literal(type), request_ref: RequestRef, ...fields },
    { additionalProperties: false },
  );

export const TurnDetectionSchema = Type.Object(
  {
    silence_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 5000 })),
    min_speech_ms: Type.Optional(Type.Integer({ minimum: 32, maximum: 5000 })),
    threshold: Type.Optional(Type.Number({ minimum: 0.05, maximum: 0.95 })),
  },
  { additionalProperties: false },
);

/** Settings of a voice session: `POST /api/voice/session` and `session.update` take the same. */
export const SessionSettingsFields = {
  conversation_id: Type.Optional(Uuid),
  voice: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.+-]+$' })),
  language: Type.Optional(
    Type.String({ minLength: 2, maxLength: 35, pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$' }),
  ),
  barge_in: Type.Optional(Type.Boolean()),
  turn_detection: Type.Optional(TurnDetectionSchema),
};

export const SessionUpdate = frame('session.update', SessionSettingsFields);
export const AudioInput = frame('audio.input', {
  /** Base64 of PCM16 mono 16 kHz little-endian; the frame limit bounds it. */
  audio: Type.String({ maxLength: 128 * 1024 }),
});
export const AudioCommit = frame('audio.commit', {});
export const TextInput = frame('text.input', { text: MessageText });
export const ResponseCancel = frame('response.cancel', { response_id: Type.Optional(Uuid) });
export const ResponseTruncate = frame('response.truncate', {
  response_id: Uuid,
  audio_end_ms: Type.Integer({ minimum: 0, maximum: 3_600_000 }),
});
export const VoicePing = frame('ping', {
  ts: Type.Optional(Type.Union([Type.Number(), Type.String({ maxLength: 64 })])),
});

export type SessionUpdateFrame = Static<typeof SessionUpdate>;
export type VoiceClientFrame =
  | SessionUpdateFrame
  | Static<typeof AudioInput>
  | Static<typeof AudioCommit>
  | Static<typeof TextInput>
  | Static<typeof ResponseCancel>
  | Static<typeof ResponseTruncate>
  | Static<typeof VoicePing>;

const SCHEMAS: Record<VoiceClientFrame['type'], object> = {
  'session.update': SessionUpdate,
  'audio.input': AudioInput,
  'audio.commit': AudioCommit,
  'text.input': TextInput,
  'response.cancel': ResponseCancel,
  'response.truncate': ResponseTruncate,
  ping: VoicePing,
};

export const parseVoiceFrame: (text: string) => Parsed<VoiceClientFrame> =
  frameParser<VoiceClientFrame>(SCHEMAS);

export type VoiceErrorCode = ErrorCode | 'STT_ERROR' | 'TTS_ERROR';

export interface ToolCallFrame {
  type: 'tool.call';
  call_id: string;
  name: string;
  arguments: Record<string, unknown>;
}
export interface ToolResultFrame {
  type: 'tool.result';
  call_id: string;
  name: string;
  result: unknown;
  error?: { code: string; message: string };
}

export interface TurnMetrics {
  response_id: string;
  stt_ms: number | null;
  llm_first_token_ms: number | null;
  tts_first_audio_ms: number | null;
  end_to_end_ms: number | null;
  eou_delay_ms: number | null;
  interrupted: boolean;
}

export type VoiceServerFrame =
  | {
      type: 'connected';
      connection_id: string;
      user_id: string;
      session_id: string;
      conversation_id: string | null;
      protocol_version: string;
      audio_format: AudioFormat;
      server_time: string;
    }
  | { type: 'session.updated'; session: SessionView }
  | { type: 'voice.state'; state: VoiceState; previous: VoiceState; reason: string }
  | { type: 'transcript.delta'; utterance_id: string; text: string }
  | { type: 'transcript.complete'; utterance_id: string; text: string; message_id: string | null }
  | { type: 'response.delta'; response_id: string; text: string }
  | {
      type: 'response.complete';
      response_id: string;
      message_id: string | null;
      text: string;
      citations: CitationDto[];
      interrupted: boolean;
    }
  | {
      type: 'audio.output';
      response_id: string;
      seq: number;
      audio: string;
      format: 'pcm16';
      sample_rate: number;
      final: boolean;
      /** 0-based index, in the answer, of the sentence this audio speaks (not on the final frame). */
      sentence?: number;
      /** That sentence as displayed, on its first audio frame only. */
      sentence_text?: string;
    }
  | ToolCallFrame
  | ToolResultFrame
  | ({ type: 'turn.metrics' } & TurnMetrics)
  | {
      type: 'error';
      code: VoiceErrorCode;
      message: string;
      recoverable: boolean;
      request_ref?: string;
    }
  | { type: 'pong'; ts: number | string | null };

export interface AudioFormat {
  encoding: 'pcm16';
  sample_rate: number;
  channels: 1;
}

export const AUDIO_FORMAT: AudioFormat = { encoding: 'pcm16', sample_rate: 16_000, channels: 1 };

/** A session's settings as the client sees them, defaults filled in. */
export interface SessionView {
  session_id: string;
  conversation_id: string | null;
  voice: string | null;
  language: string;
  barge_in: boolean;
  turn_detection: { silence_ms: number; min_speech_ms: number; threshold: number };
}
