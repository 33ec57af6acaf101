/** The one error type of the service and the one mapping from error code to HTTP status. */

export const ERROR_STATUS = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldError {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: FieldError[] | Record<string, unknown> | null = null,
    /** Extra response headers, e.g. Retry-After on RATE_LIMITED. */
    readonly headers: Record<string, string> = {},
    /**
     * Only for a client error raised below the routes with a status of its own (406, 408, 411,
     * ...): it keeps that status; every error of the service's own uses its code's status.
     */
    status?: number,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = status ?? ERROR_STATUS[code];
  }
}

export const unauthorized = (message = 'Authentication required') =>
  new AppError('UNAUTHORIZED', message);
export const forbidden = (message = 'Administrator rights required') =>
  new AppError('FORBIDDEN', message);
export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`);
export const conflict = (message: string) => new AppError('CONFLICT', message);
export const validationError = (field: string, message: string) =>
  new AppError('VALIDATION_ERROR', 'Request validation failed', [{ field, message }]);
export const serviceUnavailable = (message: string) => new AppError('SERVICE_UNAVAILABLE', message);
