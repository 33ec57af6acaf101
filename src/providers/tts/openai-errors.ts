import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { retryAfter } from '../llm/openai-errors.js';
import { ProviderError } from '../llm/types.js';

/**
 * What the `openai` SDK throws on a speech request, as a ProviderError: retryable for 408, 409,
 * 429, 5xx and connection failures. Messages carry the status and a short, key-redacted part of
 * the upstream message, never the text being spoken.
 */

const PROVIDER = 'openai';

export function speechTimedOut(timeoutMs: number): ProviderError {
  return new ProviderError(PROVIDER, `speech timed out: no audio for ${timeoutMs} ms`, {
    retryable: false,
  });
}

export function speechError(error: unknown, apiKey: string): ProviderError {
  if (error instanceof ProviderError) return error;
  if (error instanceof APIConnectionTimeoutError) {
    return new ProviderError(PROVIDER, 'speech timed out', { retryable: false, cause: error });
  }
  if (error instanceof APIConnectionError) {
    return new ProviderError(PROVIDER, 'speech endpoint unreachable', {
      retryable: true,
      cause: error,
    });
  }
  if (error instanceof APIError) {
    const status = typeof error.status === 'number' ? error.status : undefined;
    const retryable =
      status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
    const body = error.error as { message?: unknown } | null | undefined;
    const detail =
      status === 401 || status === 403
        ? 'authentication rejected; check OPENAI_API_KEY'
        : redact(typeof body?.message === 'string' ? body.message : 'no details', apiKey);
    const retryAfterMs = retryAfter(error.headers instanceof Headers ? error.headers : undefined);
    return new ProviderError(
      PROVIDER,
      `speech request failed with HTTP ${status ?? '?'}: ${detail}`,
      {
        retryable,
        ...(status === undefined ? {} : { status }),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      },
    );
  }
  // The body broke off under us (undici's "terminated", ECONNRESET).
  return new ProviderError(PROVIDER, 'speech connection lost mid-stream', {
    retryable: true,
    cause: error,
  });
}

function redact(message: string, apiKey: string): string {
  const text = apiKey === '' ? message : message.split(apiKey).join('[redacted]');
  return text.replace(/\b(sk|key|token)-[A-Za-z0-9_*-]{4,}/g, '[redacted]').slice(0, 200);
}
