import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import { EhrError, kindForStatus, malformed } from './errors.js';
import type { EhrAuth } from './types.js';

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const ASSERTION_LIFETIME_S = 300;
/** A cached token is replaced this long before it expires (or halfway, for short-lived ones). */
const EARLY_REFRESH_MS = 60_000;

/** Where the FHIR client gets its `Authorization` header from. */
export interface TokenSource {
  token(signal?: AbortSignal): Promise<string>;
  /**
   * The server answered 401 to a request sent with `token`. True when asking again with a fresh
   * token may succeed (the caller then retries once).
   */
  invalidate(token: string): boolean;
}

export interface TokenSourceDeps {
  fetch: typeof fetch;
  now: () => number;
  timeoutMs: number;
}

export function tokenSource(auth: EhrAuth, deps: TokenSourceDeps): TokenSource {
  if (auth.kind === 'bearer') {
    const token = auth.token;
    return { token: () => Promise.resolve(token), invalidate: () => false };
  }
  return new SmartBackendAuth(auth, deps);
}

type SmartAuth = Extract<EhrAuth, { kind: 'smart' }>;

interface Cached {
  token: string;
  refreshAt: number;
}

/**
 * SMART backend services: a client assertion (RS384 JWT) exchanged for an access token, which is
 * cached until shortly before it expires. Callers needing a token while one is being requested
 * share that request.
 */
export class SmartBackendAuth implements TokenSource {
  readonly #auth: SmartAuth;
  readonly #deps: TokenSourceDeps;
  #key: Promise<Awaited<ReturnType<typeof importJWK>>> | undefined;
  #cached: Cached | undefined;
  #pending: Promise<Cached> | undefined;

  constructor(auth: SmartAuth, deps: TokenSourceDeps) {
    this.#auth = auth;
    this.#deps = deps;
  }

  async token(signal?: AbortSignal): Promise<string> {
    signal?.throwIfAborted();
    const cached = this.#cached;
    if (cached !== undefined && this.#deps.now() < cached.refreshAt) return cached.token;
    if (this.#pending === undefined) {
      const pending = this.#request().finally(() => {
        if (this.#pending === pending) this.#pending = undefined;
      });
      this.#pending = pending;
    }
    const fresh = await untilAborted(this.#pending, signal);
    return fresh.token;
  }

  invalidate(token: string): boolean {
    if (this.#cached?.token === token) this.#cached = undefined;
    return true;
  }

  async #request(): Promise<Cached> {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      scope: this.#auth.scope,
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: await this.#assertion(),
    });
    const sentAt = this.#deps.now();
    const body = await this.#post(form);
    const token = body.access_token;
    const expiresIn = body.expires_in;
    if (typeof token !== 'string' || token === '')
      throw malformed('token answer has no access_token');
    if (typeof expiresIn !== 'number' || !Number.isFinite(expiresIn) || expiresIn <= 0) {
      throw malformed('token answer has no usable expires_in');
    }
    const lifetimeMs = expiresIn * 1000;
    const cached = {
      token,
      refreshAt: sentAt + lifetimeMs - Math.min(EARLY_REFRESH_MS, lifetimeMs / 2),
    };
    this.#cached = cached;
    return cached;
  }

  async #assertion(): Promise<string> {
    this.#key ??= importJWK(this.#auth.privateJwk, 'RS384');
    const key = await this.#key.catch((cause: unknown) => {
      this.#key = undefined;
      throw new EhrError('unauthorized', 'SMART private key could not be imported', { cause });
    });
    const nowS = Math.floor(this.#deps.now() / 1000);
    const header = {
      alg: 'RS384',
      typ: 'JWT',
      ...(this.#auth.keyId === undefined ? {} : { kid: this.#auth.keyId }),
    };
    return new SignJWT({})
      .setProtectedHeader(header)
      .setIssuer(this.#auth.clientId)
      .setSubject(this.#auth.clientId)
      .setAudience(this.#auth.tokenUrl)
      .setIssuedAt(nowS)
      .setExpirationTime(nowS + ASSERTION_LIFETIME_S)
      .setJti(randomUUID())
      .sign(key);
  }

  async #post(form: URLSearchParams): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await this.#deps.fetch(this.#auth.tokenUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form.toString(),
        signal: AbortSignal.timeout(this.#deps.timeoutMs),
      });
    } catch (cause) {
      throw networkFailure(cause, 'token request');
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      const kind = response.status === 400 ? 'unauthorized' : kindForStatus(response.status);
      throw new EhrError(kind, `token request failed with HTTP ${String(response.status)}`, {
        status: response.status,
      });
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (cause) {
      if (isTimeout(cause)) throw networkFailure(cause, 'token request');
      throw malformed('token answer is not JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw malformed('token answer is not an object');
    return body as Record<string, unknown>;
  }
}

export const isTimeout = (error: unknown): boolean =>
  error instanceof DOMException && error.name === 'TimeoutError';

/** A fetch that threw: our timeout, or the network. */
export function networkFailure(cause: unknown, what: string): EhrError {
  return isTimeout(cause)
    ? new EhrError('timeout', `${what} timed out`, { cause })
    : new EhrError('unavailable', `${what} could not reach the server`, { cause });
}

/** Waits for `promise` but gives up (with the signal's reason) when `signal` aborts first. */
export async function untilAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
): Promise<T> {
  if (signal === undefined) return promise;
  signal.throwIfAborted();
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => {
      reject(signal.reason as Error);
    };
  });
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
