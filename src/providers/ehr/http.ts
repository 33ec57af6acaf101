import { isTimeout, networkFailure, type TokenSource } from './auth.js';
import { EhrError, kindForStatus, malformed, retryableKind } from './errors.js';

/** Answers larger than this are refused rather than parsed. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
const FHIR_JSON = 'application/fhir+json';

export interface FhirHttpOptions {
  tokens: TokenSource;
  fetch: typeof fetch;
  timeoutMs: number;
}

export interface FhirRequest {
  method: 'GET' | 'POST';
  url: URL;
  /** Names the request in error messages: an interaction and a resource type, nothing else. */
  what: string;
  /** Reads are idempotent; their unavailable and timeout failures are retryable. */
  idempotent: boolean;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
}

export interface FhirAnswer {
  status: number;
  body: unknown;
  location: string | null;
}

/**
 * One FHIR interaction over HTTP: the token, the per-call timeout joined with the caller's
 * signal, one retry with a fresh token after a 401, and every failure as an EhrError.
 */
export class FhirHttp {
  readonly #options: FhirHttpOptions;

  constructor(options: FhirHttpOptions) {
    this.#options = options;
  }

  async send(request: FhirRequest): Promise<FhirAnswer> {
    try {
      let token = await this.#options.tokens.token(request.signal);
      let answer = await this.#attempt(request, token);
      if (answer.status === 401 && this.#options.tokens.invalidate(token)) {
        token = await this.#options.tokens.token(request.signal);
        answer = await this.#attempt(request, token);
      }
      if (answer.status === 401) {
        throw new EhrError('unauthorized', `${request.what} failed with HTTP 401`, { status: 401 });
      }
      return answer;
    } catch (error) {
      if (request.signal?.aborted === true) throw request.signal.reason as Error;
      throw withRetryable(error, request.idempotent);
    }
  }

  async #attempt(request: FhirRequest, token: string): Promise<FhirAnswer> {
    const timeout = AbortSignal.timeout(this.#options.timeoutMs);
    const signal =
      request.signal === undefined ? timeout : AbortSignal.any([request.signal, timeout]);
    let response: Response;
    try {
      response = await this.#options.fetch(request.url, {
        method: request.method,
        headers: this.#headers(request, token),
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        signal,
      });
    } catch (cause) {
      throw networkFailure(cause, request.what);
    }
    if (response.status === 401) {
      await response.body?.cancel().catch(() => undefined);
      return { status: 401, body: undefined, location: null };
    }
    if (response.status >= 400) {
      await response.body?.cancel().catch(() => undefined);
      throw new EhrError(
        kindForStatus(response.status),
        `${request.what} failed with HTTP ${String(response.status)}`,
        { status: response.status },
      );
    }
    const body = await readJson(response, request.what);
    return { status: response.status, body, location: response.headers.get('location') };
  }

  #headers(request: FhirRequest, token: string): Record<string, string> {
    return {
      accept: FHIR_JSON,
      authorization: `Bearer ${token}`,
      ...(request.body === undefined ? {} : { 'content-type': FHIR_JSON }),
      ...request.headers,
    };
  }
}

/** The body as JSON (undefined when empty); a timeout while it streams is still a timeout. */
async function readJson(response: Response, what: string): Promise<unknown> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) {
    await response.body?.cancel().catch(() => undefined);
    throw malformed(`${what} answer is too large`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (cause) {
    throw networkFailure(cause, what);
  }
  if (text.length > MAX_BODY_BYTES) throw malformed(`${what} answer is too large`);
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw malformed(`${what} answer is not JSON`);
  }
}

function withRetryable(error: unknown, idempotent: boolean): unknown {
  if (!(error instanceof EhrError)) {
    return isTimeout(error) ? networkFailure(error, 'FHIR request') : error;
  }
  const retryable = idempotent && retryableKind(error.kind);
  if (retryable === error.retryable) return error;
  return new EhrError(error.kind, error.message, {
    ...(error.status === undefined ? {} : { status: error.status }),
    retryable,
    cause: error.cause ?? error,
  });
}
