import { describe, expect, it } from 'vitest';
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

describe('audit retention configuration', () => {
  it('keeps EHR entries 6 years, sessions 1 year, errors 90 days, and purges hourly', () => {
    expect(loadConfig({}).auditRetention).toEqual({
      enabled: true,
      days: { ehr: 2190, session: 365, error: 90 },
      intervalMs: 3_600_000,
      batch: 5000,
      checkpointKey: undefined,
    });
  });

  it('reads every setting', () => {
    const key = 'k'.repeat(40);
    expect(
      loadConfig({
        AUDIT_RETENTION_ENABLED: 'false',
        AUDIT_RETENTION_EHR_DAYS: '3650',
        AUDIT_RETENTION_SESSION_DAYS: '400',
        AUDIT_RETENTION_ERROR_DAYS: '30',
        AUDIT_PURGE_INTERVAL_MS: '86400000',
        AUDIT_PURGE_BATCH: '1000',
        AUDIT_CHECKPOINT_KEY: key,
      }).auditRetention,
    ).toEqual({
      enabled: false,
      days: { ehr: 3650, session: 400, error: 30 },
      intervalMs: 86_400_000,
      batch: 1000,
      checkpointKey: key,
    });
  });

  it('names every value out of bounds in one error', () => {
    const problems = problemsOf({
      AUDIT_RETENTION_ENABLED: 'maybe',
      AUDIT_RETENTION_EHR_DAYS: '0',
      AUDIT_RETENTION_SESSION_DAYS: '-1',
      AUDIT_RETENTION_ERROR_DAYS: '1.5',
      AUDIT_PURGE_INTERVAL_MS: '1000',
      AUDIT_PURGE_BATCH: '50000',
      AUDIT_CHECKPOINT_KEY: 'short',
    });
    expect(keysOf(problems)).toEqual(
      new Set([
        'AUDIT_RETENTION_ENABLED',
        'AUDIT_RETENTION_EHR_DAYS',
        'AUDIT_RETENTION_SESSION_DAYS',
        'AUDIT_RETENTION_ERROR_DAYS',
        'AUDIT_PURGE_INTERVAL_MS',
        'AUDIT_PURGE_BATCH',
        'AUDIT_CHECKPOINT_KEY',
      ]),
    );
    // The key is never repeated back.
    expect(problems.join('\n')).not.toContain("'short'");
  });
});
