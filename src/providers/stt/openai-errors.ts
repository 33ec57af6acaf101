import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { retryAfter } from '../llm/openai-errors.js';
import { ProviderError } from '../llm/types.js';

/**
 * What the `openai` SDK throws for a transcription request, as a ProviderError. Messages carry
 * the status and the upstream error's code, never the audio or a transcript.
 */

const PROVIDER = 'openai';

export function timedOut(timeoutMs: number): ProviderError {
  return new ProviderError(PROVIDER, `transcription timed out after ${timeoutMs} ms`, {
    retryable: false,
  });
}

export function toProviderError(error: unknown, apiKey: string): ProviderError {
  if (error instanceof ProviderError) return error;
  if (error instanceof APIConnectionTimeoutError) {
    return new ProviderError(PROVIDER, 'transcription timed out', {
      retryable: false,
      cause: error,
    });
  }
  if (error instanceof APIConnectionError) {
    return new ProviderError(PROVIDER, 'transcription service unreachable', {
      retryable: true,
      cause: error,
    });
  }
  if (error instanceof APIError) return statusError(error as UpstreamError, apiKey);
  return new ProviderError(PROVIDER, 'transcription failed: malformed answer', {
    retryable: false,
    cause: error,
  });
}

/** The parts of the SDK's APIError read here. */
interface UpstreamError {
  status: unknown;
  headers: unknown;
  error: unknown;
  code: unknown;
}

function statusError(error: UpstreamError, apiKey: string): ProviderError {
  const status = typeof error.status === 'number' ? error.status : undefined;
  const retryable =
    status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
  const code = typeof error.code === 'string' && error.code !== '' ? ` (${error.code})` : '';
  const detail =
    status === 401 || status === 403
      ? 'authentication rejected; check the transcription API key'
      : redact(upstreamMessage(error), apiKey);
  const retryAfterMs = retryAfter(error.headers instanceof Headers ? error.headers : undefined);
  return new ProviderError(
    PROVIDER,
    `transcription failed with HTTP ${status ?? 'error'}${code}: ${detail}`,
    {
      retryable,
      ...(status === undefined ? {} : { status }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    },
  );
}

function upstreamMessage(error: UpstreamError): string {
  const body = error.error as { message?: unknown } | null | undefined;
  return typeof body?.message === 'string' ? body.message : 'no details';
}

function redact(message: string, apiKey: string): string {
  const text = apiKey === '' ? message : message.split(apiKey).join('[redacted]');
  return text.replace(/\b(sk|key|token)-[A-Za-z0-9_*-]{4,}/g, '[redacted]').slice(0, 200);
}
