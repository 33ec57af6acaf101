import type { Config } from '../../config.js';
import { notFound } from '../../errors.js';
import { Envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import { callerOf, contextOf, type App } from '../../platform/http/types.js';
import type { UserRow } from '../../db/schema/index.js';
import { Message, User, toUserDto, type UserDto } from '../users/schema.js';
import type { UsersService } from '../users/service.js';
import { LoginBody, RefreshBody, RegisterBody, TokenPair } from './schema.js';
import type { AuthService } from './service.js';
import type { IssuedPair } from './tokens.js';

const tags = ['auth'];
const pairDto = ({ access_token, refresh_token, token_type, expires_in }: IssuedPair) => ({
  access_token,
  refresh_token,
  token_type,
  expires_in,
});

export function authRoutes(
  app: App,
  { auth, users, limits }: { auth: AuthService; users: UsersService; limits: Config['rateLimit'] },
): void {
  app.post(
    '/api/auth/register',
    {
      config: {
        auth: 'none',
        rateLimit: { name: 'register', max: limits.registerPerHour, windowSeconds: 3600 },
      },
      schema: {
        tags,
        operationId: 'registerUser',
        summary: 'Create an account',
        body: RegisterBody,
        response: { 201: Envelope(User), 409: errorResponse('Email taken') },
      },
    },
    async (request, reply) => {
      const user = await auth.register(request.body, contextOf(request));
      return reply.code(201).send(ok(request, toUserDto(user)));
    },
  );

  app.post(
    '/api/auth/login',
    {
      config: {
        auth: 'none',
        rateLimit: { name: 'login', max: limits.loginPerMinute, windowSeconds: 60 },
      },
      schema: {
        tags,
        operationId: 'login',
        summary: 'Exchange email and password for a token pair',
        description:
          'Wrong email or password: 401. Inactive account: 403. Five failures for one email ' +
          '(registered or not) within 15 minutes lock it for 15 minutes: 429 with Retry-After.',
        body: LoginBody,
        response: {
          200: Envelope(TokenPair),
          401: errorResponse('Invalid email or password'),
          403: errorResponse('Account is inactive'),
        },
      },
    },
    async (request) => {
      const pair = await auth.login(request.body.email, request.body.password, contextOf(request));
      return ok(request, pairDto(pair));
    },
  );

  app.post(
    '/api/auth/refresh',
    {
      config: {
        auth: 'none',
        rateLimit: { name: 'refresh', max: limits.refreshPerMinute, windowSeconds: 60 },
      },
      schema: {
        tags,
        operationId: 'refreshTokens',
        summary: 'Rotate a refresh token into a new pair',
        description: 'Single use: presenting a used refresh token revokes its whole family.',
        body: RefreshBody,
        response: {
          200: Envelope(TokenPair),
          401: errorResponse('Invalid, expired, used or revoked token'),
        },
      },
    },
    async (request) => {
      const pair = await auth.refresh(request.body.refresh_token, contextOf(request));
      return ok(request, pairDto(pair));
    },
  );

  app.post(
    '/api/auth/logout',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        operationId: 'logout',
        summary: 'Revoke the presented access token and its refresh family',
        response: { 200: Envelope(Message) },
      },
    },
    async (request) => {
      await auth.logout(callerOf(request), contextOf(request));
      return ok(request, { message: 'Logged out' });
    },
  );

  // The answer for a row, formatted once (its three dates cost ~1 µs per request): a cached row is
  // never modified, and a changed or expired user is a new row object.
  const profiles = new WeakMap<UserRow, UserDto>();
  const profileOf = (user: UserRow) => {
    let dto = profiles.get(user);
    if (dto === undefined) {
      dto = toUserDto(user);
      profiles.set(user, dto);
    }
    return dto;
  };
  app.get(
    '/api/auth/me',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        operationId: 'getCurrentUser',
        summary: 'The current user',
        response: { 200: Envelope(User) },
      },
    },
    // The row authentication has just read (DECISIONS 2: cached for under a second, dropped on
    // every change made through this instance), not a second query per request.
    async (request) => {
      const user = await users.findForAuth(callerOf(request).id);
      if (user === undefined) throw notFound('User');
      return ok(request, profileOf(user));
    },
  );
}
