import { Type, type Static } from 'typebox';

const Days = (fallback: number) => Type.Integer({ minimum: 1, maximum: 36_500, default: fallback });

/**
 * Audit retention (issue 13, docs/operations.md "Retention"): how long each family of audit
 * entries is kept, and how often the purge looks for expired ones. Declared here to keep
 * config.ts readable; config.ts reads and validates them with everything else.
 */
export const AuditEnv = {
  AUDIT_RETENTION_ENABLED: Type.Boolean({ default: true }),
  AUDIT_RETENTION_EHR_DAYS: Days(2190),
  AUDIT_RETENTION_SESSION_DAYS: Days(365),
  AUDIT_RETENTION_ERROR_DAYS: Days(90),
  AUDIT_PURGE_INTERVAL_MS: Type.Integer({
    minimum: 60_000,
    maximum: 7 * 86_400_000,
    default: 3_600_000,
  }),
  AUDIT_PURGE_BATCH: Type.Integer({ minimum: 100, maximum: 20_000, default: 5000 }),
  // Signs the purge's checkpoints; unset: derived from the JWT signing secret (then rotating that
  // secret leaves earlier checkpoints unverifiable, so set this one in production).
  AUDIT_CHECKPOINT_KEY: Type.Optional(Type.String({ minLength: 32, maxLength: 1024 })),
};

type AuditEnvValues = Static<ReturnType<typeof Type.Object<typeof AuditEnv>>>;

export interface AuditRetentionSettings {
  auditRetention: {
    /** Whether this instance runs the periodic purge (the CLI purges either way). */
    enabled: boolean;
    days: { ehr: number; session: number; error: number };
    intervalMs: number;
    /** Entries removed per transaction (each batch writes its own checkpoint). */
    batch: number;
    checkpointKey: string | undefined;
  };
}

export function auditConfig(env: AuditEnvValues): AuditRetentionSettings {
  return {
    auditRetention: {
      enabled: env.AUDIT_RETENTION_ENABLED,
      days: {
        ehr: env.AUDIT_RETENTION_EHR_DAYS,
        session: env.AUDIT_RETENTION_SESSION_DAYS,
        error: env.AUDIT_RETENTION_ERROR_DAYS,
      },
      intervalMs: env.AUDIT_PURGE_INTERVAL_MS,
      batch: env.AUDIT_PURGE_BATCH,
      checkpointKey: env.AUDIT_CHECKPOINT_KEY,
    },
  };
}
