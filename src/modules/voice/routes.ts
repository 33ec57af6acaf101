import multipart from '@fastify/multipart';
import { Type } from 'typebox';
import { validationError } from '../../errors.js';
import { Envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import { callerOf, type App } from '../../platform/http/types.js';
import { strictAjv } from '../../platform/http/validation.js';
import { Citation } from '../conversations/schema.js';
import { Uuid } from '../users/schema.js';
import { answerAudio } from './audio-turn.js';
import { MAX_AUDIO_FORM_BYTES, receiveAudio } from './audio-upload.js';
import type { VoiceDeps } from './deps.js';
import { SessionSettingsFields } from './protocol.js';
import { DEFAULT_SETTINGS, sessionView } from './sessions.js';

const tags = ['voice'];
const user = { config: { auth: 'user' as const } };

const SessionBody = Type.Object(SessionSettingsFields, { additionalProperties: false });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()]);

const VoiceSession = Type.Object({
  session_id: Uuid,
  conversation_id: Uuid,
  socket_url: Type.String({ description: 'path of the voice socket; add `&token=<ACCESS_TOKEN>`' }),
  audio_format: Type.Object({
    encoding: Type.Literal('pcm16'),
    sample_rate: Type.Integer(),
    channels: Type.Literal(1),
  }),
  output_sample_rate: Type.Integer(),
  expires_at: Type.String({ format: 'date-time' }),
  voice: Nullable(Type.String()),
  language: Type.String(),
  barge_in: Type.Boolean(),
  turn_detection: Type.Object({
    silence_ms: Type.Integer(),
    min_speech_ms: Type.Integer(),
    threshold: Type.Number(),
  }),
});

const AudioForm = Type.Object({
  file: Type.String({
    format: 'binary',
    description: 'WAV (any common rate, mono or stereo) or raw PCM16 mono 16 kHz; at most 30 s',
  }),
  conversation_id: Type.Optional(Uuid),
  voice: SessionSettingsFields.voice,
  language: SessionSettingsFields.language,
});
const AudioFields = Type.Object(
  {
    conversation_id: Type.Optional(Uuid),
    voice: SessionSettingsFields.voice,
    language: SessionSettingsFields.language,
  },
  { additionalProperties: false },
);
const checkFields = strictAjv().compile(AudioFields);

const AudioAnswer = Type.Object({
  conversation_id: Uuid,
  transcript: Type.String(),
  user_message_id: Nullable(Uuid),
  message_id: Nullable(Uuid),
  response_text: Type.String(),
  citations: Type.Array(Citation),
  audio: Nullable(
    Type.Object({
      format: Type.Literal('wav'),
      sample_rate: Type.Integer(),
      data: Type.String({ description: 'base64 of the WAV file' }),
    }),
  ),
});

/** Spec 4.9 (voice) and DECISIONS 5: the session handle and the one-shot audio turn. */
export async function voiceRoutes(app: App, deps: VoiceDeps): Promise<void> {
  app.post(
    '/api/voice/session',
    {
      ...user,
      schema: {
        tags,
        operationId: 'createVoiceSession',
        summary: 'Start a voice session: its settings, conversation and socket',
        body: SessionBody,
        response: {
          201: Envelope(VoiceSession),
          404: errorResponse('No such conversation of the caller'),
        },
      },
    },
    async (request, reply) => {
      const record = await deps.sessions.create(callerOf(request).id, request.body);
      const view = sessionView(record.id, record);
      return reply.code(201).send(
        ok(request, {
          ...view,
          conversation_id: record.conversationId ?? '',
          socket_url: `/api/voice/pipeline-ws?session_id=${record.id}`,
          audio_format: { encoding: 'pcm16' as const, sample_rate: 16_000, channels: 1 as const },
          output_sample_rate: deps.limits.outputSampleRate,
          expires_at: record.expiresAt,
        }),
      );
    },
  );
  await app.register(async (scoped) => {
    // Multipart is parsed only in this scope: every other route keeps answering it with 415.
    await scoped.register(multipart, { limits: { fileSize: MAX_AUDIO_FORM_BYTES } });
    audioRoute(scoped, deps);
  });
}

function audioRoute(app: App, deps: VoiceDeps): void {
  app.post(
    '/api/voice/audio',
    {
      ...user,
      // The form is read as a stream and checked while it arrives (receiveAudio).
      validatorCompiler: () => () => true,
      schema: {
        tags,
        operationId: 'answerVoiceAudio',
        summary: 'One spoken question: transcript, answer with citations, and the answer spoken',
        description:
          'multipart/form-data: `file` (WAV of any common rate, mono or stereo, resampled; or raw PCM16 mono 16 kHz), optional `conversation_id`, `voice`, `language`. The turn is stored on the conversation (created when none is given). At most 30 s of audio.',
        consumes: ['multipart/form-data'],
        body: AudioForm,
        response: {
          200: Envelope(AudioAnswer),
          404: errorResponse('No such conversation of the caller'),
          413: errorResponse('Form over 16 MB; the server stops reading'),
          415: errorResponse('Not multipart/form-data'),
        },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const upload = await receiveAudio(request, deps.limits.maxUtteranceMs);
      if (!checkFields(upload.fields)) {
        const e = checkFields.errors?.[0];
        throw validationError(
          `body${e?.instancePath.replaceAll('/', '.') ?? ''}`,
          e?.message ?? 'is invalid',
        );
      }
      const settings = await deps.sessions.apply(caller.id, DEFAULT_SETTINGS, upload.fields);
      const controller = new AbortController();
      // A client that goes away stops recognition, model and speech.
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) controller.abort();
      });
      return ok(request, await answerAudio(deps, caller, upload.pcm, settings, controller.signal));
    },
  );
}
