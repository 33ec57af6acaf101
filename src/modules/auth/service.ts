import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { UserRow } from '../../db/schema/index.js';
import { isUniqueViolation } from '../../db/errors.js';
import { AppError, conflict, unauthorized } from '../../errors.js';
import type { Metrics } from '../../platform/metrics.js';
import { userEvent, type AuditService, type RequestContext } from '../audit/service.js';
import { normalizeEmail, type UsersService } from '../users/service.js';
import { usersRepo } from '../users/repo.js';
import type { LoginLockout } from './lockout.js';
import { hashPassword, passwordProblems, verifyAgainstDummy, verifyPassword } from './password.js';
import { refreshTokensRepo } from './repo.js';
import type { RevocationList } from './revocation.js';
import type { IssuedPair, TokenSigner } from './tokens.js';

export interface AuthUser {
  id: string;
  email: string;
  role: 'user' | 'admin';
  jti: string;
  family: string;
  exp: number;
}

export interface Registration {
  email: string;
  password: string;
  full_name: string;
  role?: 'user' | 'admin';
}

const LOGIN_FAILED = 'Invalid email or password';

/** Registration, login with lockout, refresh rotation with reuse detection, logout (4.1). */
export class AuthService {
  constructor(
    private readonly db: Db,
    private readonly tokens: TokenSigner,
    private readonly revocations: RevocationList,
    private readonly users: UsersService,
    private readonly lockout: LoginLockout,
    private readonly audit: AuditService,
    private readonly metrics: Metrics,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async register(input: Registration, ctx: RequestContext, source = 'api'): Promise<UserRow> {
    const email = normalizeEmail(input.email);
    const problems = passwordProblems(input.password, email, 'body.password');
    if (problems.length > 0) throw new AppError('VALIDATION_ERROR', 'Password rejected', problems);
    const passwordHash = await hashPassword(input.password);
    const role = input.role ?? 'user';
    try {
      return await this.db.transaction(async (tx) => {
        const id = randomUUID();
        const fullName = input.full_name.trim();
        const user = await usersRepo.insert(tx, {
          id,
          email,
          fullName,
          passwordHash,
          adminRole: role,
        });
        const event = userEvent('auth.register', user, id, { details: { source, role } });
        await this.audit.append(tx, event, ctx);
        return user;
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('An account with this email already exists');
      throw err;
    }
  }

  /**
   * The password check is reserved before argon2 runs (per email, registered or not), so at most
   * the lockout's number of wrong passwords is ever checked in its window, however many arrive.
   */
  async login(emailInput: string, password: string, ctx: RequestContext): Promise<IssuedPair> {
    const email = normalizeEmail(emailInput);
    const [user, attempt] = await Promise.all([
      usersRepo.findByEmail(this.db, email),
      this.lockout.reserve(email),
    ]);
    if (typeof attempt !== 'number') {
      await this.failed(user ?? { id: null, email }, user?.id ?? null, 'locked', ctx);
      throw attempt;
    }
    if (user === undefined) await verifyAgainstDummy(password);
    if (user === undefined || !(await verifyPassword(user.passwordHash, password))) {
      await this.lockout.recordWrongPassword(email, user, attempt, ctx);
      throw unauthorized(LOGIN_FAILED);
    }
    await this.lockout.reset(email);
    if (!user.isActive) {
      await this.failed(user, user.id, 'inactive', ctx);
      throw new AppError('FORBIDDEN', 'This account is inactive');
    }
    return this.signIn(user, ctx);
  }

  private async signIn(user: UserRow, ctx: RequestContext): Promise<IssuedPair> {
    const pair = await this.tokens.issuePair(user.id);
    await this.db.transaction(async (tx) => {
      // A password change or deactivation that committed since the check revoked every session:
      // this one must not begin after it.
      if (!(await usersRepo.recordLogin(tx, user.id, user.passwordHash, this.now()))) {
        throw unauthorized(LOGIN_FAILED);
      }
      await refreshTokensRepo.insert(tx, { ...pair.refresh, userId: user.id });
      await this.audit.append(tx, userEvent('auth.login', user, user.id), ctx);
    });
    await this.users.forget(user.id);
    this.metrics.authEvents.inc({ event: 'login' });
    return pair;
  }

  async refresh(refreshToken: string, ctx: RequestContext): Promise<IssuedPair> {
    const claims = await this.tokens.verify(refreshToken, 'refresh');
    const pair = await this.db.transaction(async (tx) => {
      // The user's row before the token: a revocation of the user's tokens in progress is waited
      // for, and one starting later sees the token issued here (usersRepo.lockForTokens).
      const user = await usersRepo.lockForTokens(tx, claims.sub);
      const consumed = await refreshTokensRepo.consume(tx, claims.jti, this.now());
      if (consumed === undefined) return undefined;
      if (user?.isActive !== true || user.id !== consumed.userId) {
        throw unauthorized('Account is not active');
      }
      const next = await this.tokens.issuePair(user.id, consumed.familyId);
      await refreshTokensRepo.insert(tx, { ...next.refresh, userId: user.id });
      return next;
    });
    if (pair === undefined) {
      await this.rejectRefresh(claims.jti, ctx);
      throw unauthorized('Refresh token is no longer valid');
    }
    this.metrics.authEvents.inc({ event: 'refresh' });
    return pair;
  }

  async logout(user: AuthUser, ctx: RequestContext): Promise<void> {
    const now = this.now();
    await this.db.transaction(async (tx) => {
      await usersRepo.lockForTokens(tx, user.id);
      await refreshTokensRepo.revokeFamily(tx, user.family, now);
      await this.revocations.revokeToken(user.jti, user.exp - Math.floor(now.getTime() / 1000));
      await this.revocations.revokeFamilies([user.family]);
      await this.audit.append(tx, userEvent('auth.logout', user, user.id), ctx);
    });
  }

  /** Every authenticated request: signature, expiry, type, revocation, user exists and is active. */
  async authenticate(token: string): Promise<AuthUser> {
    const claims = await this.tokens.verify(token, 'access');
    const [revoked, user] = await Promise.all([
      this.revocations.isRevoked(claims.jti, claims.fam),
      this.users.findForAuth(claims.sub),
    ]);
    if (revoked) throw unauthorized('Token has been revoked');
    if (user === undefined) throw unauthorized('Account no longer exists');
    if (!user.isActive) throw unauthorized('Account is inactive');
    return {
      id: user.id,
      email: user.email,
      role: user.adminRole,
      jti: claims.jti,
      family: claims.fam,
      exp: claims.exp,
    };
  }

  private async failed(
    actor: { id: string | null; email: string },
    userId: string | null,
    reason: string,
    ctx: RequestContext,
  ): Promise<void> {
    this.metrics.authEvents.inc({ event: 'login_failed' });
    const event = userEvent('auth.login_failed', actor, userId, {
      success: false,
      details: { reason },
    });
    await this.audit.record(event, ctx);
  }

  /** A refresh token that was already used means it leaked: revoke its whole family. */
  private async rejectRefresh(jti: string, ctx: RequestContext): Promise<void> {
    const row = await refreshTokensRepo.find(this.db, jti);
    if (row?.usedAt == null) return;
    const now = this.now();
    await this.db.transaction(async (tx) => {
      await usersRepo.lockForTokens(tx, row.userId);
      await refreshTokensRepo.revokeFamily(tx, row.familyId, now);
      await this.revocations.revokeFamilies([row.familyId]);
      const details = { family: row.familyId };
      const event = userEvent(
        'auth.refresh_reuse_detected',
        { id: row.userId, email: null },
        row.userId,
        { success: false, details },
      );
      await this.audit.append(tx, event, ctx);
    });
    this.metrics.authEvents.inc({ event: 'refresh_reuse' });
  }
}
