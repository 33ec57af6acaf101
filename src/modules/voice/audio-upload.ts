import type { FastifyRequest } from 'fastify';
import { AppError, validationError } from '../../errors.js';
import { AudioFormatError } from '../../platform/audio/errors.js';
import { decodeWav } from '../../platform/audio/wav.js';
import { guardBodySize, type BodyGuard } from '../../platform/http/body-limit.js';
import { BYTES_PER_SECOND } from './utterance.js';

/** Largest form of `POST /api/voice/audio`: 30 s of 48 kHz stereo float WAV, with room. */
export const MAX_AUDIO_FORM_BYTES = 16 * 1024 * 1024;

const FIELDS = ['conversation_id', 'voice', 'language'] as const;
type Field = (typeof FIELDS)[number];

export interface AudioUpload {
  /** PCM16 mono 16 kHz little-endian. */
  pcm: Buffer;
  fields: Partial<Record<Field, string>>;
}

const tooLarge = () =>
  new AppError('PAYLOAD_TOO_LARGE', 'The audio form is larger than 16 MB', null, {
    connection: 'close',
  });

/**
 * Reads the multipart form of `POST /api/voice/audio`: `file` (a WAV file of any common rate, mono
 * or stereo, resampled; or raw PCM16 mono 16 kHz when it has no RIFF header) and the optional
 * text fields `conversation_id`, `voice`, `language` (checked by the caller). Bounded while it
 * arrives; at most `maxMs` of audio is accepted.
 */
export async function receiveAudio(request: FastifyRequest, maxMs: number): Promise<AudioUpload> {
  if (!request.isMultipart()) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the audio as multipart/form-data');
  }
  if (Number(request.headers['content-length']) > MAX_AUDIO_FORM_BYTES) throw tooLarge();
  const fields: Partial<Record<Field, string>> = {};
  let file: Buffer | undefined;
  let guard: BodyGuard | undefined;
  try {
    const parts = request.parts({
      limits: { fileSize: MAX_AUDIO_FORM_BYTES, files: 1, fields: 3, fieldSize: 256, parts: 4 },
    });
    guard = guardBodySize(request.raw, MAX_AUDIO_FORM_BYTES, tooLarge);
    for await (const part of parts) {
      if (part.type === 'field') {
        const name = FIELDS.find((f) => f === part.fieldname);
        if (name === undefined)
          throw validationError(`body.${part.fieldname}`, 'is not an allowed field');
        if (fields[name] !== undefined) throw validationError(`body.${name}`, 'is given twice');
        fields[name] = String(part.value);
      } else {
        if (part.fieldname !== 'file')
          throw validationError(`body.${part.fieldname}`, 'is not an allowed field');
        file = await part.toBuffer();
      }
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
    throw validationError('body', 'is not valid multipart/form-data');
  } finally {
    guard?.dispose();
  }
  if (file === undefined || file.length === 0) throw validationError('body.file', 'is required');
  return { pcm: toPcm(file, maxMs), fields };
}

function toPcm(file: Buffer, maxMs: number): Buffer {
  const isWav = file.length >= 12 && file.toString('latin1', 0, 4) === 'RIFF';
  if (isWav) {
    try {
      const samples = decodeWav(file, { sampleRate: 16_000, maxSeconds: maxMs / 1000 });
      return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
    } catch (err) {
      if (err instanceof AudioFormatError) throw validationError('body.file', err.reason);
      throw err;
    }
  }
  if (file.length % 2 !== 0) {
    throw validationError('body.file', 'is neither WAV nor whole PCM16 samples');
  }
  if (file.length > (maxMs / 1000) * BYTES_PER_SECOND) {
    throw validationError('body.file', `is longer than ${String(maxMs / 1000)} s`);
  }
  return file;
}
