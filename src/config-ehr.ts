import { readFileSync } from 'node:fs';
import { Type, type Static } from 'typebox';
import type { JWK } from 'jose';

/**
 * The EHR integration's settings (issue 13). Declared here to keep config.ts readable; config.ts
 * reads and validates them with everything else. FHIR_BASE_URL unset: the integration is off and
 * says so (`status: 'disabled'`).
 */

const HttpUrl = Type.String({
  pattern: '^https?://[^\\s]+$',
  maxLength: 2048,
  description: 'an http:// or https:// URL',
});
const FHIR_ID = '[A-Za-z0-9.-]{1,64}';

export const EhrEnv = {
  FHIR_BASE_URL: Type.Optional(HttpUrl),
  FHIR_AUTH: Type.Union([Type.Literal('bearer'), Type.Literal('smart')], { default: 'bearer' }),
  FHIR_BEARER_TOKEN: Type.Optional(Type.String({ minLength: 1, maxLength: 8192 })),
  FHIR_SMART_TOKEN_URL: Type.Optional(HttpUrl),
  FHIR_SMART_CLIENT_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  /** A file holding the RS384 private key as a JWK (JSON), read at start-up. */
  FHIR_SMART_PRIVATE_KEY_FILE: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  FHIR_SMART_SCOPE: Type.String({
    minLength: 1,
    maxLength: 2048,
    default:
      'system/Patient.read system/Observation.read system/Condition.read ' +
      'system/MedicationRequest.read system/AllergyIntolerance.read system/Encounter.read ' +
      'system/Observation.write system/DocumentReference.write',
  }),
  EHR_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
  EHR_BREAKER_HALF_OPEN_AFTER_MS: Type.Integer({
    minimum: 100,
    maximum: 3_600_000,
    default: 60_000,
  }),
  EHR_BREAKER_PROBE_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 1_000 }),
  EHR_BREAKER_PROBE_SUCCESSES: Type.Integer({ minimum: 1, maximum: 10, default: 3 }),
  EHR_LAST_GOOD_TTL_MS: Type.Integer({
    minimum: 1000,
    maximum: 30 * 86_400_000,
    default: 86_400_000,
  }),
  EHR_ALLOWED_PATIENTS: Type.Optional(
    Type.String({
      pattern: `^${FHIR_ID}(,${FHIR_ID})*$`,
      maxLength: 65_536,
      description: 'comma-separated FHIR ids (letters, digits, - and ., at most 64 each)',
    }),
  ),
  EHR_ALLOW_ALL_PATIENTS: Type.Boolean({ default: false }),
};

type EhrEnvValues = Static<ReturnType<typeof Type.Object<typeof EhrEnv>>>;

export type EhrAuthConfig =
  | { kind: 'bearer'; token: string }
  | { kind: 'smart'; tokenUrl: string; clientId: string; privateJwk: JWK; scope: string };

export interface EhrSettings {
  ehr: {
    /** Undefined: the integration is disabled. */
    fhir: { baseUrl: string; auth: EhrAuthConfig } | undefined;
    timeoutMs: number;
    halfOpenAfterMs: number;
    /** Between successful probes of the half-open breaker. */
    probeIntervalMs: number;
    /** Successful probes in a row that close it. */
    probeSuccesses: number;
    lastGoodTtlMs: number;
    /** The FHIR patient ids a user may read and write, unless `allowAllPatients`. */
    allowedPatients: string[];
    allowAllPatients: boolean;
  };
}

/** Keys read and checked by the start-up key-file reading, kept until ehrConfig asks. */
const keys = new WeakMap<object, JWK>();

function validUrl(value: string | undefined): boolean {
  if (value === undefined) return true;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/** The private key file as a JWK with private RSA parts, or why not (never its content). */
function readJwk(file: string): JWK | string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return 'cannot be read';
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    const jwk = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as JWK;
    const ok = jwk.kty === 'RSA' && typeof jwk.d === 'string';
    return ok ? jwk : 'must hold an RSA private key as a JWK (JSON with kty RSA and d)';
  } catch {
    return 'must hold an RSA private key as a JWK (JSON)';
  }
}

/** Cross-key rules; problems go into the one list config.ts reports. */
export function checkEhr(env: EhrEnvValues, problems: Map<string, string>): void {
  for (const key of ['FHIR_BASE_URL', 'FHIR_SMART_TOKEN_URL'] as const) {
    if (!problems.has(key) && !validUrl(env[key])) problems.set(key, 'must be a valid URL');
  }
  if (env.FHIR_BASE_URL === undefined) return;
  if (env.FHIR_AUTH === 'bearer') {
    if (env.FHIR_BEARER_TOKEN === undefined && !problems.has('FHIR_BEARER_TOKEN')) {
      problems.set('FHIR_BEARER_TOKEN', 'required when FHIR_AUTH=bearer');
    }
    return;
  }
  if ((env.FHIR_AUTH as string) !== 'smart') return; // an invalid FHIR_AUTH is already listed
  for (const key of [
    'FHIR_SMART_TOKEN_URL',
    'FHIR_SMART_CLIENT_ID',
    'FHIR_SMART_PRIVATE_KEY_FILE',
  ] as const) {
    if (env[key] === undefined && !problems.has(key)) {
      problems.set(key, 'required when FHIR_AUTH=smart');
    }
  }
  const file = env.FHIR_SMART_PRIVATE_KEY_FILE;
  if (file === undefined || problems.has('FHIR_SMART_PRIVATE_KEY_FILE')) return;
  const jwk = readJwk(file);
  if (typeof jwk === 'string') problems.set('FHIR_SMART_PRIVATE_KEY_FILE', jwk);
  else keys.set(env, jwk);
}

function fhirAuth(env: EhrEnvValues): EhrAuthConfig {
  if (env.FHIR_AUTH === 'bearer') return { kind: 'bearer', token: env.FHIR_BEARER_TOKEN ?? '' };
  const file = env.FHIR_SMART_PRIVATE_KEY_FILE ?? '';
  const jwk = keys.get(env) ?? readJwk(file);
  if (typeof jwk === 'string') throw new Error(`FHIR_SMART_PRIVATE_KEY_FILE ${jwk}`);
  return {
    kind: 'smart',
    tokenUrl: env.FHIR_SMART_TOKEN_URL ?? '',
    clientId: env.FHIR_SMART_CLIENT_ID ?? '',
    privateJwk: jwk,
    scope: env.FHIR_SMART_SCOPE,
  };
}

/** Called after checkEhr found nothing wrong. */
export function ehrConfig(env: EhrEnvValues): EhrSettings {
  return {
    ehr: {
      fhir:
        env.FHIR_BASE_URL === undefined
          ? undefined
          : { baseUrl: env.FHIR_BASE_URL, auth: fhirAuth(env) },
      timeoutMs: env.EHR_TIMEOUT_MS,
      halfOpenAfterMs: env.EHR_BREAKER_HALF_OPEN_AFTER_MS,
      probeIntervalMs: env.EHR_BREAKER_PROBE_INTERVAL_MS,
      probeSuccesses: env.EHR_BREAKER_PROBE_SUCCESSES,
      lastGoodTtlMs: env.EHR_LAST_GOOD_TTL_MS,
      allowedPatients: env.EHR_ALLOWED_PATIENTS?.split(',') ?? [],
      allowAllPatients: env.EHR_ALLOW_ALL_PATIENTS,
    },
  };
}
