import type { AuditService, RequestContext } from '../audit/service.js';
import { SYSTEM_CONTEXT } from '../audit/service.js';
import type { FlagsService } from '../flags/service.js';
import { checkId } from '../../providers/ehr/validate.js';
import {
  EHR_READ_REFUSED,
  EHR_WRITE_REFUSED,
  EhrRefusal,
  PATIENT_NOT_ALLOWED,
  failureKind,
} from './errors.js';

/** The user on whose behalf the EHR is read or written, and the request it came with. */
export interface EhrCaller {
  id: string;
  email?: string | null;
  ctx?: RequestContext;
}

export type EhrAccessFlag = 'ehr.read' | 'ehr.write';

/** Which patients users may see: a configured list, or all of them. */
export interface PatientAccess {
  allowAll: boolean;
  patients: readonly string[];
}

/**
 * The checks before any EHR request: the feature flag for the user, then a well-formed FHIR id
 * (the provider's check), then the allowed set. Each refusal is an EhrRefusal naming its kind.
 */
export class EhrGuard {
  private readonly allowed: ReadonlySet<string>;

  constructor(
    private readonly flags: Pick<FlagsService, 'isEnabled'>,
    private readonly access: PatientAccess,
  ) {
    this.allowed = new Set(access.patients);
  }

  async check(caller: EhrCaller, flag: EhrAccessFlag, patientId: unknown): Promise<string> {
    if (!(await this.flags.isEnabled(flag, caller.id))) {
      const message = flag === 'ehr.read' ? EHR_READ_REFUSED : EHR_WRITE_REFUSED;
      throw new EhrRefusal('flag_off', 'FORBIDDEN', message);
    }
    let id: string;
    try {
      id = checkId(patientId);
    } catch {
      throw new EhrRefusal('invalid_input', 'VALIDATION_ERROR', 'Request validation failed', [
        { field: 'patient_id', message: 'must be a FHIR id (letters, digits, - and ., ≤ 64)' },
      ]);
    }
    if (!this.access.allowAll && !this.allowed.has(id)) {
      throw new EhrRefusal('patient_not_allowed', 'FORBIDDEN', PATIENT_NOT_ALLOWED);
    }
    return id;
  }
}

/** A patient id fit for an audit entry: the id when well formed, else nothing. */
export function auditablePatient(patientId: unknown): string | null {
  try {
    return checkId(patientId);
  } catch {
    return null;
  }
}

/** Audit entries of EHR access: ids, types, counts and outcomes, never content. */
export class EhrAudit {
  constructor(private readonly audit: Pick<AuditService, 'record'>) {}

  access(
    caller: EhrCaller,
    action: 'ehr.read' | 'ehr.write' | 'ehr.write_failed',
    patientId: unknown,
    success: boolean,
    details: Record<string, unknown>,
  ): Promise<void> {
    return this.audit.record(
      {
        action,
        success,
        actorId: caller.id,
        actorEmail: caller.email ?? null,
        resourceType: 'patient',
        resourceId: auditablePatient(patientId),
        details,
      },
      caller.ctx ?? SYSTEM_CONTEXT,
    );
  }

  /** A failure's entry; the audit failing too must not hide the original error. */
  async failure(
    caller: EhrCaller,
    action: 'ehr.read' | 'ehr.write_failed',
    patientId: unknown,
    details: Record<string, unknown>,
    error: unknown,
    onAuditError: (e: unknown) => void,
  ): Promise<void> {
    await this.access(caller, action, patientId, false, {
      ...details,
      error_kind: failureKind(error),
    }).catch(onAuditError);
  }

  degradation(type: 'degradation.activated' | 'degradation.recovered', reason?: string) {
    return this.audit.record(
      {
        action: type,
        success: true,
        actorId: null,
        resourceType: 'dependency',
        resourceId: 'ehr',
        details: reason === undefined ? {} : { reason },
      },
      SYSTEM_CONTEXT,
    );
  }
}
