/**
 * The one error an EhrProvider throws. Messages name the operation, the resource type and the
 * HTTP status, never a query string, a token or any resource content, so they are safe to log.
 */
export type EhrErrorKind =
  /** 5xx, 429, connection refused or reset: the server may answer later. */
  | 'unavailable'
  /** The per-call timeout elapsed before a complete answer arrived. */
  | 'timeout'
  | 'not_found'
  /** 401/403 from the FHIR server (after one token refresh), or the token endpoint refused us. */
  | 'unauthorized'
  /** The answer failed the boundary checks (wrong type, missing fields, not JSON). */
  | 'malformed'
  /** Any other 4xx, or an argument refused before a request was sent (an invalid patient id). */
  | 'rejected';

export interface EhrErrorOptions {
  status?: number;
  /** True only for idempotent reads that failed as unavailable or timeout. */
  retryable?: boolean;
  cause?: unknown;
}

export class EhrError extends Error {
  readonly provider = 'fhir';
  readonly kind: EhrErrorKind;
  readonly status: number | undefined;
  readonly retryable: boolean;

  constructor(kind: EhrErrorKind, message: string, options: EhrErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EhrError';
    this.kind = kind;
    this.status = options.status;
    this.retryable = options.retryable ?? false;
  }
}

/** The kind an HTTP error status maps to. */
export function kindForStatus(status: number): EhrErrorKind {
  if (status === 404 || status === 410) return 'not_found';
  if (status === 401 || status === 403) return 'unauthorized';
  if (status === 408) return 'timeout';
  if (status === 429 || status >= 500) return 'unavailable';
  return 'rejected';
}

/** Whether a failure of this kind on an idempotent read may succeed when tried again. */
export const retryableKind = (kind: EhrErrorKind): boolean =>
  kind === 'unavailable' || kind === 'timeout';

export const malformed = (what: string): EhrError =>
  new EhrError('malformed', `FHIR answer refused: ${what}`);
