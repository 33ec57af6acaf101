import { knownFailure } from '../openai-errors.js';
import { ProviderError } from '../llm/types.js';

/** A speech request's errors as ProviderErrors: never the text being spoken. */

const PROVIDER = 'openai';
const WHAT = 'speech';

export function speechTimedOut(timeoutMs: number): ProviderError {
  return new ProviderError(PROVIDER, `speech timed out: no audio for ${timeoutMs} ms`, {
    retryable: false,
  });
}

export function speechError(error: unknown, apiKey: string): ProviderError {
  if (error instanceof ProviderError) return error;
  const known = knownFailure(error, apiKey, WHAT);
  if (known !== undefined) return known;
  // The body broke off under us (undici's "terminated", ECONNRESET).
  return new ProviderError(PROVIDER, 'speech connection lost mid-stream', {
    retryable: true,
    cause: error,
  });
}
