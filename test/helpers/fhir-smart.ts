import { randomBytes } from 'node:crypto';
import { importJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** SMART backend services: the assertion's `exp` must be no more than five minutes ahead. */
const MAX_ASSERTION_LIFETIME_S = 300;

export interface SmartOptions {
  clientId: string;
  publicJwk: JWK;
  tokenTtlSeconds?: number;
}

export interface TokenReply {
  status: number;
  body: Record<string, unknown>;
}

const oauthError = (status: number, error: string, description: string): TokenReply => ({
  status,
  body: { error, error_description: description },
});

/**
 * The token endpoint of SMART backend services (client_credentials with a private_key_jwt
 * assertion, RS384) and the access tokens it issued.
 */
export class SmartAuthority {
  readonly #options: SmartOptions;
  readonly #tokenUrl: string;
  readonly #usedJti = new Map<string, number>();
  readonly #tokens = new Map<string, number>();
  issued = 0;

  constructor(options: SmartOptions, tokenUrl: string) {
    this.#options = options;
    this.#tokenUrl = tokenUrl;
  }

  /** True when `token` was issued here and has not expired. */
  accepts(token: string): boolean {
    const expiresAt = this.#tokens.get(token);
    return expiresAt !== undefined && Date.now() < expiresAt;
  }

  async exchange(form: URLSearchParams): Promise<TokenReply> {
    const grantType = form.get('grant_type');
    if (grantType !== 'client_credentials') {
      return oauthError(400, 'unsupported_grant_type', 'grant_type must be client_credentials');
    }
    const assertion = form.get('client_assertion');
    if (
      form.get('client_assertion_type') !== ASSERTION_TYPE ||
      assertion === null ||
      assertion === ''
    ) {
      return oauthError(400, 'invalid_request', 'a jwt-bearer client_assertion is required');
    }
    const scope = form.get('scope');
    if (scope === null || scope.trim() === '')
      return oauthError(400, 'invalid_scope', 'scope is required');
    const failure = await this.#verify(assertion);
    if (failure !== undefined) return oauthError(401, 'invalid_client', failure);
    const ttl = this.#options.tokenTtlSeconds ?? 300;
    const token = randomBytes(32).toString('base64url');
    this.#tokens.set(token, Date.now() + ttl * 1000);
    this.issued += 1;
    return {
      status: 200,
      body: { access_token: token, token_type: 'bearer', expires_in: ttl, scope },
    };
  }

  /** Returns why the assertion is refused, or undefined when it is good. */
  async #verify(assertion: string): Promise<string | undefined> {
    let payload: JWTPayload;
    try {
      const key = await importJWK(this.#options.publicJwk, 'RS384');
      ({ payload } = await jwtVerify(assertion, key, {
        algorithms: ['RS384'],
        issuer: this.#options.clientId,
        subject: this.#options.clientId,
        audience: this.#tokenUrl,
        requiredClaims: ['exp', 'jti'],
      }));
    } catch (err) {
      return `client assertion refused: ${(err as { code?: string }).code ?? 'invalid'}`;
    }
    const now = Math.floor(Date.now() / 1000);
    if ((payload.exp ?? 0) > now + MAX_ASSERTION_LIFETIME_S)
      return 'client assertion exp is more than 5 minutes ahead';
    const jti = payload.jti ?? '';
    for (const [used, until] of this.#usedJti) if (until < now) this.#usedJti.delete(used);
    if (this.#usedJti.has(jti)) return 'client assertion jti was already used';
    this.#usedJti.set(jti, payload.exp ?? now);
    return undefined;
  }
}
