import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error(`configuration was accepted: ${JSON.stringify(env)}`);
}

const keysOf = (problems: string[]) => new Set(problems.map((p) => p.split(':')[0]));
const FHIR = 'https://fhir.example.org/r4';

describe('EHR configuration', () => {
  let dir: string;
  let keyFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mas-ehr-config-'));
    const { privateKey } = await generateKeyPair('RS384', { extractable: true });
    keyFile = path.join(dir, 'key.jwk.json');
    await writeFile(keyFile, JSON.stringify(await exportJWK(privateKey)));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('is disabled with the documented defaults when FHIR_BASE_URL is unset', () => {
    expect(loadConfig({}).ehr).toEqual({
      fhir: undefined,
      timeoutMs: 10_000,
      halfOpenAfterMs: 60_000,
      probeIntervalMs: 1_000,
      probeSuccesses: 3,
      lastGoodTtlMs: 86_400_000,
      allowedPatients: [],
      allowAllPatients: false,
    });
  });

  it('reads a bearer setup and the allowed patients', () => {
    const config = loadConfig({
      FHIR_BASE_URL: FHIR,
      FHIR_BEARER_TOKEN: 'tok',
      EHR_ALLOWED_PATIENTS: 'pat-1,pat.2',
      EHR_TIMEOUT_MS: '2500',
      EHR_BREAKER_HALF_OPEN_AFTER_MS: '200',
      EHR_BREAKER_PROBE_INTERVAL_MS: '250',
      EHR_BREAKER_PROBE_SUCCESSES: '2',
      EHR_LAST_GOOD_TTL_MS: '60000',
      EHR_ALLOW_ALL_PATIENTS: 'no',
    });
    expect(config.ehr).toEqual({
      fhir: { baseUrl: FHIR, auth: { kind: 'bearer', token: 'tok' } },
      timeoutMs: 2500,
      halfOpenAfterMs: 200,
      probeIntervalMs: 250,
      probeSuccesses: 2,
      lastGoodTtlMs: 60_000,
      allowedPatients: ['pat-1', 'pat.2'],
      allowAllPatients: false,
    });
  });

  it('reads a SMART setup, the private key from its file at start-up', () => {
    const config = loadConfig({
      FHIR_BASE_URL: FHIR,
      FHIR_AUTH: 'smart',
      FHIR_SMART_TOKEN_URL: 'https://auth.example.org/token',
      FHIR_SMART_CLIENT_ID: 'client-1',
      FHIR_SMART_PRIVATE_KEY_FILE: keyFile,
      FHIR_SMART_SCOPE: 'system/Patient.read',
      EHR_ALLOW_ALL_PATIENTS: 'true',
    });
    const auth = config.ehr.fhir?.auth;
    expect(auth).toMatchObject({
      kind: 'smart',
      tokenUrl: 'https://auth.example.org/token',
      clientId: 'client-1',
      scope: 'system/Patient.read',
      privateJwk: { kty: 'RSA' },
    });
    expect(auth?.kind === 'smart' && typeof auth.privateJwk.d).toBe('string');
    expect(config.ehr.allowAllPatients).toBe(true);
  });

  it('requires the bearer token with FHIR_AUTH=bearer', () => {
    const problems = problemsOf({ FHIR_BASE_URL: FHIR });
    expect(problems).toEqual(['FHIR_BEARER_TOKEN: required when FHIR_AUTH=bearer']);
  });

  it('lists every missing SMART setting', () => {
    const problems = problemsOf({ FHIR_BASE_URL: FHIR, FHIR_AUTH: 'smart' });
    expect(keysOf(problems)).toEqual(
      new Set(['FHIR_SMART_TOKEN_URL', 'FHIR_SMART_CLIENT_ID', 'FHIR_SMART_PRIVATE_KEY_FILE']),
    );
  });

  it('refuses an unreadable or non-JWK key file without quoting it', async () => {
    const smart = {
      FHIR_BASE_URL: FHIR,
      FHIR_AUTH: 'smart',
      FHIR_SMART_TOKEN_URL: 'https://auth.example.org/token',
      FHIR_SMART_CLIENT_ID: 'c',
    };
    expect(
      problemsOf({ ...smart, FHIR_SMART_PRIVATE_KEY_FILE: path.join(dir, 'absent.json') }),
    ).toEqual(['FHIR_SMART_PRIVATE_KEY_FILE: cannot be read']);
    const bad = path.join(dir, 'bad.json');
    await writeFile(bad, '{"kty":"RSA","n":"secret-ish"}');
    const problems = problemsOf({ ...smart, FHIR_SMART_PRIVATE_KEY_FILE: bad });
    expect(keysOf(problems)).toEqual(new Set(['FHIR_SMART_PRIVATE_KEY_FILE']));
    expect(problems.join()).not.toContain('secret-ish');
  });

  it('lists non-URLs, bad enumerations, bounds and patient lists together', () => {
    const problems = problemsOf({
      FHIR_BASE_URL: 'fhir.example.org',
      FHIR_AUTH: 'basic',
      FHIR_SMART_TOKEN_URL: 'http://',
      EHR_TIMEOUT_MS: '10',
      EHR_BREAKER_HALF_OPEN_AFTER_MS: 'soon',
      EHR_BREAKER_PROBE_INTERVAL_MS: '50',
      EHR_BREAKER_PROBE_SUCCESSES: '0',
      EHR_ALLOWED_PATIENTS: 'pat-1,,pat 2',
      EHR_ALLOW_ALL_PATIENTS: 'maybe',
    });
    expect(keysOf(problems)).toEqual(
      new Set([
        'FHIR_BASE_URL',
        'FHIR_AUTH',
        'FHIR_SMART_TOKEN_URL',
        'EHR_TIMEOUT_MS',
        'EHR_BREAKER_HALF_OPEN_AFTER_MS',
        'EHR_BREAKER_PROBE_INTERVAL_MS',
        'EHR_BREAKER_PROBE_SUCCESSES',
        'EHR_ALLOWED_PATIENTS',
        'EHR_ALLOW_ALL_PATIENTS',
      ]),
    );
    expect(problems).toContain('FHIR_BASE_URL: must be an http:// or https:// URL');
    expect(problems).toContain('FHIR_AUTH: must be one of bearer, smart');
  });
});
