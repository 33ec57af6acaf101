import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { unauthorized } from '../../errors.js';
import { TtlCache, type CacheCounts } from '../../platform/cache.js';

export type TokenType = 'access' | 'refresh';

export interface TokenClaims {
  sub: string;
  jti: string;
  type: TokenType;
  fam: string;
  iat: number;
  exp: number;
}

export interface IssuedPair {
  access_token: string;
  refresh_token: string;
  token_type: 'bearer';
  expires_in: number;
  refresh: { jti: string; familyId: string; issuedAt: Date; expiresAt: Date };
}

/** Verified tokens remembered: bounded in number (~3 MB at most) and in time. */
const VERIFIED_MAX = 10_000;
const VERIFIED_TTL_MS = 5 * 60_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Signs and verifies the HS256 access and refresh JWTs of DECISIONS 2. */
export class TokenSigner {
  private readonly key: Uint8Array;
  private readonly verified: TtlCache<TokenClaims>;

  constructor(
    secret: string,
    private readonly accessTtl: number,
    private readonly refreshTtl: number,
    private readonly now: () => number = Date.now,
  ) {
    this.key = new TextEncoder().encode(secret);
    this.verified = new TtlCache(VERIFIED_TTL_MS, VERIFIED_MAX, now);
  }

  /** Hits and misses of the verified-token cache, for cache_requests_total. */
  get cacheCounts(): CacheCounts {
    return this.verified;
  }

  async issuePair(userId: string, familyId: string = randomUUID()): Promise<IssuedPair> {
    const iat = Math.floor(this.now() / 1000);
    const refreshJti = randomUUID();
    const [access, refresh] = await Promise.all([
      this.sign(
        { sub: userId, jti: randomUUID(), type: 'access', fam: familyId },
        iat,
        this.accessTtl,
      ),
      this.sign(
        { sub: userId, jti: refreshJti, type: 'refresh', fam: familyId },
        iat,
        this.refreshTtl,
      ),
    ]);
    return {
      access_token: access,
      refresh_token: refresh,
      token_type: 'bearer',
      expires_in: this.accessTtl,
      refresh: {
        jti: refreshJti,
        familyId,
        issuedAt: new Date(iat * 1000),
        expiresAt: new Date((iat + this.refreshTtl) * 1000),
      },
    };
  }

  /**
   * Verifies signature, expiry and type; any failure is a 401 with a short reason. A token whose
   * signature checked out is remembered by its exact text for a few minutes, so a client's repeated
   * requests skip the HMAC (jose's WebCrypto verification costs ~40 µs of CPU, most of an
   * authenticated request). Expiry is checked on every use; revocation is the caller's per-request
   * check and is not cached. An entry is not renewed when used (that cost a map update per request):
   * a token in use is verified again every few minutes.
   */
  async verify(token: string, type: TokenType): Promise<TokenClaims> {
    let claims = this.verified.get(token);
    if (claims === undefined) {
      claims = await this.verifySignature(token, type);
      this.verified.set(token, claims);
    }
    if (claims.type !== type) throw unauthorized(`Invalid ${type} token`);
    if (claims.exp * 1000 <= this.now()) throw unauthorized('Token has expired');
    return claims;
  }

  private async verifySignature(token: string, type: TokenType): Promise<TokenClaims> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        currentDate: new Date(this.now()),
      }));
    } catch (err) {
      throw unauthorized(
        err instanceof joseErrors.JWTExpired ? 'Token has expired' : 'Invalid token',
      );
    }
    const { sub, jti, fam, iat, exp } = payload;
    if (
      payload.type !== type ||
      typeof sub !== 'string' ||
      !UUID.test(sub) ||
      typeof jti !== 'string' ||
      typeof fam !== 'string' ||
      typeof iat !== 'number' ||
      typeof exp !== 'number'
    ) {
      throw unauthorized(`Invalid ${type} token`);
    }
    return { sub, jti, type, fam, iat, exp };
  }

  private sign(claims: Omit<TokenClaims, 'iat' | 'exp'>, iat: number, ttl: number) {
    return new SignJWT({ type: claims.type, fam: claims.fam })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.sub)
      .setJti(claims.jti)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttl)
      .sign(this.key);
  }
}

/**
 * The signing secret: JWT_SECRET when set; otherwise one generated on first start and kept in
 * DATA_DIR (mode 0600), so tokens survive a restart of the embedded default.
 */
export async function loadOrCreateSecret(configured: string | undefined, dataDir: string) {
  if (configured !== undefined) return configured;
  const file = path.resolve(dataDir, 'jwt-secret');
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing.length >= 32) return existing;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(path.dirname(file), { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  await writeFile(file, secret + '\n', { mode: 0o600, flag: 'w' });
  await chmod(file, 0o600);
  return secret;
}
