import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { ProviderError } from './types.js';

/**
 * What the `openai` SDK (or the body under it) throws, as a ProviderError. Messages carry the
 * status and the upstream error's code and type, and at most a short, key-redacted part of its
 * message: never the request, so no prompt or passage text can reach a log through them.
 */

const PROVIDER = 'openai';

export function timedOut(timeoutMs: number): ProviderError {
  return new ProviderError(PROVIDER, `language model timed out: no data for ${timeoutMs} ms`, {
    retryable: false,
  });
}

export function toProviderError(error: unknown, apiKey: string): ProviderError {
  if (error instanceof ProviderError) return error;
  if (error instanceof APIConnectionTimeoutError) {
    return new ProviderError(PROVIDER, 'language model timed out', {
      retryable: false,
      cause: error,
    });
  }
  if (error instanceof APIConnectionError) {
    return new ProviderError(PROVIDER, 'language model unreachable', {
      retryable: true,
      cause: error,
    });
  }
  if (error instanceof APIError) return statusError(error as UpstreamError, apiKey);
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

/** The parts of the SDK's APIError read here. */
interface UpstreamError {
  status: unknown;
  headers: unknown;
  error: unknown;
  code: unknown;
  type: unknown;
}

function statusError(error: UpstreamError, apiKey: string): ProviderError {
  const status = typeof error.status === 'number' ? error.status : undefined;
  // No status: an `error` object sent inside the stream, which OpenAI does for server faults.
  const retryable =
    status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
  const label = [error.code, error.type].filter((x) => typeof x === 'string' && x !== '');
  const detail =
    status === 401 || status === 403
      ? 'authentication rejected; check OPENAI_API_KEY'
      : redact(upstreamMessage(error), apiKey);
  const where = status === undefined ? 'in the stream' : `with HTTP ${status}`;
  const headers = error.headers instanceof Headers ? error.headers : undefined;
  const retryAfterMs = retryAfter(headers);
  return new ProviderError(
    PROVIDER,
    `language model request failed ${where}${label.length > 0 ? ` (${label.join(', ')})` : ''}: ${detail}`,
    {
      retryable,
      ...(status === undefined ? {} : { status }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    },
  );
}

/** The upstream `error.message`, without the SDK's "429 " prefix. */
function upstreamMessage(error: UpstreamError): string {
  const body = error.error as { message?: unknown } | null | undefined;
  return typeof body?.message === 'string' ? body.message : 'no details';
}

function redact(message: string, apiKey: string): string {
  const text = apiKey === '' ? message : message.split(apiKey).join('[redacted]');
  return text.replace(/\b(sk|key|token)-[A-Za-z0-9_*-]{4,}/g, '[redacted]').slice(0, 200);
}

/** `retry-after-ms` (OpenAI), else `retry-after` in seconds or as an HTTP date. */
export function retryAfter(headers: Headers | undefined): number | undefined {
  const msHeader = headers?.get('retry-after-ms') ?? '';
  const ms = msHeader.trim() === '' ? Number.NaN : Number(msHeader);
  if (Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  const header = headers?.get('retry-after') ?? null;
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
