import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { ProviderError } from './llm/types.js';

/**
 * What the `openai` SDK throws, as a ProviderError, for every OpenAI-compatible adapter (language
 * model, transcription, speech). `what` names the service in the message ("speech",
 * "transcription", "language model"). Messages carry the status, the upstream error's code and
 * type and at most a short, key-redacted part of its message: never the request, so no prompt,
 * passage, transcript or spoken text can reach a log through them.
 */

const PROVIDER = 'openai';

/** 408, 409, 429 and 5xx may succeed when sent again; no status (an in-stream error) too. */
export const retryableStatus = (status: number | undefined): boolean =>
  status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;

/**
 * A timeout, an unreachable endpoint or an error answer (or an `error` object inside a stream,
 * which has no status); undefined for anything else.
 */
export function knownFailure(
  error: unknown,
  apiKey: string,
  what: string,
): ProviderError | undefined {
  if (error instanceof APIConnectionTimeoutError) {
    return new ProviderError(PROVIDER, `${what} timed out`, { retryable: false, cause: error });
  }
  if (error instanceof APIConnectionError) {
    return new ProviderError(PROVIDER, `${what} unreachable`, { retryable: true, cause: error });
  }
  return error instanceof APIError ? upstreamFailure(error as Upstream, apiKey, what) : undefined;
}

/** The parts of the SDK's APIError read here. */
interface Upstream {
  status: unknown;
  headers: unknown;
  code: unknown;
  type: unknown;
  error: unknown;
}

function upstreamFailure(upstream: Upstream, apiKey: string, what: string): ProviderError {
  const status = typeof upstream.status === 'number' ? upstream.status : undefined;
  const label = [upstream.code, upstream.type].filter((x) => typeof x === 'string' && x !== '');
  const body = upstream.error as { message?: unknown } | null | undefined;
  const detail =
    status === 401 || status === 403
      ? 'authentication rejected; check OPENAI_API_KEY'
      : redact(typeof body?.message === 'string' ? body.message : 'no details', apiKey);
  const where = status === undefined ? 'in the stream' : `with HTTP ${String(status)}`;
  const headers = upstream.headers instanceof Headers ? upstream.headers : undefined;
  const retryAfterMs = retryAfter(headers);
  const labels = label.length > 0 ? ` (${label.join(', ')})` : '';
  return new ProviderError(PROVIDER, `${what} request failed ${where}${labels}: ${detail}`, {
    retryable: retryableStatus(status),
    ...(status === undefined ? {} : { status }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

function redact(message: string, apiKey: string): string {
  const text = apiKey === '' ? message : message.split(apiKey).join('[redacted]');
  return text.replace(/\b(sk|key|token)-[A-Za-z0-9_*-]{4,}/g, '[redacted]').slice(0, 200);
}

/** `retry-after-ms` (OpenAI), else `retry-after` in seconds or as an HTTP date. */
function retryAfter(headers: Headers | undefined): number | undefined {
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
