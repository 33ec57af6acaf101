import { AppError } from '../../errors.js';
import { EhrError } from '../../providers/ehr/errors.js';
import { ResilienceError } from '../../providers/ehr/resilience.js';

/** The messages callers see; none names a patient, a query or any content. */
export const EHR_NOT_CONFIGURED = 'the EHR integration is not configured';
export const EHR_READ_REFUSED = 'EHR read access is not enabled for this user';
export const EHR_WRITE_REFUSED = 'EHR write access is not enabled for this user';
/**
 * The one answer for a patient outside the user's allowed set. It is decided before anything is
 * asked of the EHR, so it says nothing about whether such a patient exists there.
 */
export const PATIENT_NOT_ALLOWED = 'this patient is not accessible to this user';

/** What went wrong, for audit details (`error_kind`) and metrics: never a message or content. */
export type EhrFailureKind =
  | 'flag_off'
  | 'patient_not_allowed'
  | 'invalid_input'
  | 'circuit_open'
  | EhrError['kind']
  | 'internal';

export class EhrRefusal extends AppError {
  constructor(
    readonly kind: EhrFailureKind,
    code: AppError['code'],
    message: string,
    details: AppError['details'] = null,
  ) {
    super(code, message, details);
  }
}

export function failureKind(error: unknown): EhrFailureKind {
  if (error instanceof EhrRefusal) return error.kind;
  if (error instanceof ResilienceError) return error.kind;
  if (error instanceof EhrError) return error.kind;
  return 'internal';
}

/** A provider or resilience failure as the AppError a route or a tool answers with. */
export function toAppError(error: unknown, what: string): AppError {
  if (error instanceof AppError) return error;
  const kind = failureKind(error);
  switch (kind) {
    case 'not_found':
      return new EhrRefusal(kind, 'NOT_FOUND', `${what} not found`);
    case 'rejected':
      return new EhrRefusal(kind, 'VALIDATION_ERROR', 'The EHR refused the request', [
        { field: 'ehr', message: error instanceof Error ? error.message : 'rejected' },
      ]);
    case 'internal':
      return new EhrRefusal(kind, 'INTERNAL_ERROR', 'EHR request failed');
    default:
      return new EhrRefusal(kind, 'SERVICE_UNAVAILABLE', 'the EHR is unavailable', { kind });
  }
}
