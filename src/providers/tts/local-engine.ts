import { AudioFormatError } from '../../platform/audio/errors.js';
import { decodeWav } from '../../platform/audio/wav.js';
import { ProviderError } from '../llm/types.js';
import type { SpeakContext } from './pipeline.js';

/** What Flite and eSpeak NG share: their WAV output read as PCM16 mono at the rate asked. */

/** Longest audio one engine run may produce (a piece is at most a few hundred characters). */
const MAX_PIECE_SECONDS = 120;

export function wavToPcm(provider: string, wav: Buffer, context: SpeakContext): Int16Array {
  try {
    return decodeWav(wav, {
      sampleRate: context.sampleRate,
      maxSeconds: MAX_PIECE_SECONDS,
      openEnded: true,
    });
  } catch (error) {
    if (!(error instanceof AudioFormatError)) throw error;
    throw new ProviderError(provider, `unusable audio from the engine: ${error.reason}`, {
      retryable: false,
      cause: error,
    });
  }
}

/** Bytes of 16-bit audio at 48 kHz for MAX_PIECE_SECONDS: a cap on any engine's output. */
export const MAX_PIECE_BYTES = MAX_PIECE_SECONDS * 48_000 * 2 + 4096;

/** Control characters out, so the engine sees plain text (no escapes, no form feeds). */
export function plainText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
}

/** A voice or language name safe to pass as an argument: never an option, never a path. */
export const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_+-]{0,39}$/;

/** An iterable that fails on first use: errors of `synthesize` surface where the caller iterates. */
export function refusal(error: Error): AsyncIterable<never> {
  return {
    [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }),
  };
}
