import { knownFailure } from '../openai-errors.js';
import { ProviderError } from './types.js';

/** The language model's errors as ProviderErrors (the shared mapping, plus the stream's own). */

const PROVIDER = 'openai';
const WHAT = 'language model';

export function timedOut(timeoutMs: number): ProviderError {
  return new ProviderError(PROVIDER, `language model timed out: no data for ${timeoutMs} ms`, {
    retryable: false,
  });
}

export function toProviderError(error: unknown, apiKey: string): ProviderError {
  if (error instanceof ProviderError) return error;
  const known = knownFailure(error, apiKey, WHAT);
  if (known !== undefined) return known;
  if (error instanceof SyntaxError) {
    return new ProviderError(PROVIDER, 'malformed stream: a chunk was not JSON', {
      retryable: false,
    });
  }
  // The body broke off under us (undici's "terminated", ECONNRESET, "other side closed").
  return new ProviderError(PROVIDER, 'language model connection lost mid-stream', {
    retryable: true,
    cause: error,
  });
}
