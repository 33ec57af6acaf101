import { knownFailure } from '../openai-errors.js';
import { ProviderError } from '../llm/types.js';

/** A transcription request's errors as ProviderErrors: never the audio or a transcript. */

const PROVIDER = 'openai';
const WHAT = 'transcription';

export function timedOut(timeoutMs: number): ProviderError {
  return new ProviderError(PROVIDER, `transcription timed out after ${timeoutMs} ms`, {
    retryable: false,
  });
}

export function toProviderError(error: unknown, apiKey: string): ProviderError {
  if (error instanceof ProviderError) return error;
  const known = knownFailure(error, apiKey, WHAT);
  if (known !== undefined) return known;
  return new ProviderError(PROVIDER, 'transcription failed: malformed answer', {
    retryable: false,
    cause: error,
  });
}
