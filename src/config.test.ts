import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

const SECRET = 'x'.repeat(32);

/** The ConfigError thrown for `env`, or a failure when the environment is accepted. */
function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`configuration was accepted: ${JSON.stringify(env)}`);
}

const problemsOf = (env: Record<string, string>) => errorOf(env).problems;

const keysOf = (problems: string[]) => new Set(problems.map((p) => p.split(':')[0]));

describe('loadConfig', () => {
  it('applies the documented defaults to an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      env: 'development',
      host: '127.0.0.1',
      port: 8000,
      dataDir: './data',
      databaseUrl: undefined,
      redisUrl: undefined,
      jwtSecret: undefined,
      bootstrapAdmin: undefined,
      logLevel: 'info',
      trustProxy: false,
      accessTokenTtl: 900,
      refreshTokenTtl: 604_800,
      rateLimit: {
        enabled: true,
        registerPerHour: 5,
        loginPerMinute: 10,
        refreshPerMinute: 30,
        healthPerMinute: 100,
        readyPerMinute: 100,
      },
      lockout: { maxFailures: 5, windowSeconds: 900, lockSeconds: 900 },
      chaos: { enabled: false },
    });
  });

  it('treats an empty value as unset', () => {
    expect(loadConfig({ PORT: '', HOST: '' })).toMatchObject({ port: 8000, host: '127.0.0.1' });
  });

  it('parses numbers and URLs', () => {
    const config = loadConfig({
      PORT: '9001',
      DATABASE_URL: 'postgresql://u:p@db:5432/x',
      REDIS_URL: 'rediss://cache:6380',
      RATE_LIMIT_LOGIN_PER_MINUTE: '3',
      RATE_LIMIT_REFRESH_PER_MINUTE: '12',
    });
    expect(config.port).toBe(9001);
    expect(config.databaseUrl).toBe('postgresql://u:p@db:5432/x');
    expect(config.redisUrl).toBe('rediss://cache:6380');
    expect(config.rateLimit.loginPerMinute).toBe(3);
    expect(config.rateLimit.refreshPerMinute).toBe(12);
  });

  it('refuses a refresh limit below one', () => {
    expect(problemsOf({ RATE_LIMIT_REFRESH_PER_MINUTE: '0' })).toEqual([
      'RATE_LIMIT_REFRESH_PER_MINUTE: must be >= 1',
    ]);
  });

  it.each([
    ['true', true],
    ['TRUE', true],
    ['1', true],
    ['yes', true],
    ['on', true],
    ['false', false],
    ['0', false],
    ['No', false],
    ['off', false],
  ])('parses the boolean %j as %s', (raw, expected) => {
    const config = loadConfig({ TRUST_PROXY: raw, RATE_LIMIT_ENABLED: raw, CHAOS_ENABLED: raw });
    // TRUST_PROXY also takes a hop count, so there digits are numbers.
    expect(config.trustProxy).toBe(/^\d$/.test(raw) ? Number(raw) : expected);
    expect(config.rateLimit.enabled).toBe(expected);
    expect(config.chaos.enabled).toBe(expected);
  });

  it('refuses a boolean it cannot read', () => {
    expect(keysOf(problemsOf({ TRUST_PROXY: 'maybe' }))).toEqual(new Set(['TRUST_PROXY']));
    expect(keysOf(problemsOf({ RATE_LIMIT_ENABLED: 'perhaps' }))).toEqual(
      new Set(['RATE_LIMIT_ENABLED']),
    );
    expect(keysOf(problemsOf({ CHAOS_ENABLED: 'sometimes' }))).toEqual(new Set(['CHAOS_ENABLED']));
  });

  it('reads integers as plain decimal digits only', () => {
    for (const port of ['0x50', ' 80', '1e3', '80.0', '8O']) {
      expect(problemsOf({ PORT: port }), port).toEqual([expect.stringMatching(/^PORT: /)]);
    }
    expect(loadConfig({ PORT: '8080' }).port).toBe(8080);
  });

  it('lists the allowed values of an enumeration, once', () => {
    expect(problemsOf({ LOG_LEVEL: 'loud' })).toEqual([
      'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent',
    ]);
  });

  it('takes TRUST_PROXY as a boolean, a hop count or a list of proxy addresses', () => {
    expect(loadConfig({ TRUST_PROXY: 'yes' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1,10.1.0.0/16' }).trustProxy).toBe(
      '10.0.0.1,10.1.0.0/16',
    );
    expect(keysOf(problemsOf({ TRUST_PROXY: '10.0.0.1; rm -rf' }))).toEqual(
      new Set(['TRUST_PROXY']),
    );
  });

  it('takes CORS_ORIGINS as a list of browser origins or *, and none by default', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
    expect(
      loadConfig({
        CORS_ORIGINS: 'https://App.Example.com,http://localhost:5173,http://[::1]:8080',
      }).corsOrigins,
    ).toEqual(['https://app.example.com', 'http://localhost:5173', 'http://[::1]:8080']);
    for (const bad of ['https://a.example.com/', 'a.example.com', 'ftp://a', 'https://a,*', ' *']) {
      expect(problemsOf({ CORS_ORIGINS: bad }), bad).toEqual([
        'CORS_ORIGINS: must be comma-separated origins like https://app.example.com (no path), or *',
      ]);
    }
  });

  it('names every bad key in one error', () => {
    const err = errorOf({
      PORT: 'abc',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'mysql://x',
      REDIS_URL: 'http://cache',
      NODE_ENV: 'staging',
    });
    expect(keysOf(err.problems)).toEqual(
      new Set(['PORT', 'LOG_LEVEL', 'DATABASE_URL', 'REDIS_URL', 'NODE_ENV']),
    );
    for (const key of ['PORT', 'LOG_LEVEL', 'DATABASE_URL', 'REDIS_URL', 'NODE_ENV']) {
      expect(err.message).toContain(`- ${key}:`);
    }
    // No line repeated.
    expect(err.problems).toHaveLength(new Set(err.problems).size);
  });

  it.each([
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['DATABASE_POOL_SIZE', '0'],
    ['REDIS_PREFIX', 'has spaces'],
    ['ACCESS_TOKEN_TTL_SECONDS', '10'],
    ['SHUTDOWN_TIMEOUT_MS', '999999'],
  ])('refuses %s=%j', (key, value) => {
    expect(keysOf(problemsOf({ [key]: value }))).toEqual(new Set([key]));
  });

  it('requires JWT_SECRET in production', () => {
    const problems = problemsOf({ NODE_ENV: 'production' });
    expect(keysOf(problems)).toEqual(new Set(['JWT_SECRET']));
    expect(loadConfig({ NODE_ENV: 'production', JWT_SECRET: SECRET }).jwtSecret).toBe(SECRET);
  });

  it('allows the embedded default to run without JWT_SECRET outside production', () => {
    expect(loadConfig({ NODE_ENV: 'development' }).jwtSecret).toBeUndefined();
  });

  it('refuses a JWT_SECRET shorter than 32 characters', () => {
    const problems = problemsOf({ JWT_SECRET: 'x'.repeat(31) });
    expect(keysOf(problems)).toEqual(new Set(['JWT_SECRET']));
    expect(problemsOf({ NODE_ENV: 'production', JWT_SECRET: 'short' })).toHaveLength(1);
  });

  it('needs both bootstrap administrator settings or neither', () => {
    const onlyEmail = problemsOf({ BOOTSTRAP_ADMIN_EMAIL: 'root@example.test' });
    expect(onlyEmail.join('\n')).toMatch(/BOOTSTRAP_ADMIN_PASSWORD/);
    const onlyPassword = problemsOf({ BOOTSTRAP_ADMIN_PASSWORD: 'a long enough password' });
    expect(onlyPassword.join('\n')).toMatch(/BOOTSTRAP_ADMIN_EMAIL/);
    expect(
      loadConfig({
        BOOTSTRAP_ADMIN_EMAIL: 'root@example.test',
        BOOTSTRAP_ADMIN_PASSWORD: 'a long enough password',
      }).bootstrapAdmin,
    ).toEqual({ email: 'root@example.test', password: 'a long enough password' });
  });

  it('keeps the socket registry refresh within half its TTL', () => {
    expect(loadConfig({}).wsRegistry).toEqual({ ttlMs: 30_000, refreshMs: 10_000 });
    expect(
      loadConfig({ WS_REGISTRY_TTL_MS: '2000', WS_REGISTRY_REFRESH_MS: '1000' }).wsRegistry,
    ).toEqual({ ttlMs: 2000, refreshMs: 1000 });
    expect(keysOf(problemsOf({ WS_REGISTRY_TTL_MS: '2000' }))).toEqual(
      new Set(['WS_REGISTRY_REFRESH_MS']),
    );
    expect(keysOf(problemsOf({ WS_REGISTRY_TTL_MS: '999' }))).toEqual(
      new Set(['WS_REGISTRY_TTL_MS']),
    );
  });

  it('reports the bootstrap pair together with other problems', () => {
    const problems = problemsOf({ BOOTSTRAP_ADMIN_EMAIL: 'root@example.test', PORT: 'abc' });
    expect(problems.some((p) => p.startsWith('PORT'))).toBe(true);
    expect(problems.some((p) => p.includes('BOOTSTRAP_ADMIN'))).toBe(true);
  });

  describe('Nextcloud file store', () => {
    const NEXTCLOUD = {
      NEXTCLOUD_URL: 'https://cloud.example/remote.php/dav/files/clinic',
      NEXTCLOUD_USER: 'clinic',
      NEXTCLOUD_PASSWORD: 'app-password-0123',
    };
    const without = (key: keyof typeof NEXTCLOUD): Record<string, string> =>
      Object.fromEntries(Object.entries(NEXTCLOUD).filter(([k]) => k !== key));

    it('is off by default: uploads go to DATA_DIR/files', () => {
      expect(loadConfig({}).nextcloud).toBeUndefined();
    });

    it('reads URL, user, password and the root folder (default /medical-assistant)', () => {
      expect(loadConfig(NEXTCLOUD).nextcloud).toEqual({
        url: 'https://cloud.example/remote.php/dav/files/clinic',
        user: 'clinic',
        password: 'app-password-0123',
        root: '/medical-assistant',
      });
      const plain = {
        ...NEXTCLOUD,
        NEXTCLOUD_URL: 'http://10.0.0.5:8080/dav',
        NEXTCLOUD_ROOT: '/',
      };
      expect(loadConfig(plain).nextcloud).toMatchObject({ url: plain.NEXTCLOUD_URL, root: '/' });
      expect(loadConfig({ ...NEXTCLOUD, NEXTCLOUD_ROOT: '/Shared/KB 2024/' }).nextcloud?.root).toBe(
        '/Shared/KB 2024/',
      );
    });

    it.each(['ftp://cloud.example/dav', 'webdav://cloud.example', 'cloud.example/dav', 'https://'])(
      'refuses NEXTCLOUD_URL=%j',
      (url) => {
        expect(keysOf(problemsOf({ ...NEXTCLOUD, NEXTCLOUD_URL: url }))).toEqual(
          new Set(['NEXTCLOUD_URL']),
        );
      },
    );

    it('refuses credentials inside the URL without repeating them', () => {
      const problems = problemsOf({
        ...NEXTCLOUD,
        NEXTCLOUD_URL: 'https://clinic:hunter2secret@cloud.example/dav',
      });
      expect(keysOf(problems)).toEqual(new Set(['NEXTCLOUD_URL']));
      expect(problems.join('\n')).not.toContain('hunter2secret');
    });

    it('requires user and password with the URL, listed with the other bad keys', () => {
      const problems = problemsOf({ NEXTCLOUD_URL: NEXTCLOUD.NEXTCLOUD_URL, PORT: 'abc' });
      expect(keysOf(problems)).toEqual(new Set(['PORT', 'NEXTCLOUD_USER', 'NEXTCLOUD_PASSWORD']));
      expect(keysOf(problemsOf(without('NEXTCLOUD_PASSWORD')))).toEqual(
        new Set(['NEXTCLOUD_PASSWORD']),
      );
    });

    it('requires the URL when user or password is set', () => {
      const problems = problemsOf(without('NEXTCLOUD_URL'));
      expect(keysOf(problems)).toEqual(new Set(['NEXTCLOUD_URL']));
      expect(problems.join('\n')).not.toContain(NEXTCLOUD.NEXTCLOUD_PASSWORD);
    });

    it.each([
      ['NEXTCLOUD_USER', 'has:colon'],
      ['NEXTCLOUD_PASSWORD', 'p'.repeat(1025)],
      ['NEXTCLOUD_ROOT', 'relative/path'],
      ['NEXTCLOUD_ROOT', '/a/../b'],
      ['NEXTCLOUD_ROOT', '/..'],
      ['NEXTCLOUD_ROOT', '/a//b'],
      ['NEXTCLOUD_ROOT', '/a\\b'],
    ])('refuses %s=%j', (key, value) => {
      const problems = problemsOf({ ...NEXTCLOUD, [key]: value });
      expect(keysOf(problems)).toEqual(new Set([key]));
      expect(problems.join('\n')).not.toContain(value);
    });
  });

  it('ignores keys it does not know', () => {
    expect(() => loadConfig({ SOMETHING_ELSE: 'value', PATH: '/bin' })).not.toThrow();
  });
});
