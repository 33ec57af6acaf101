import type { FastifyRequest } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import type { AppError } from '../../errors.js';
import { isoNow } from '../clock.js';
import { MAX_FIELD_ERRORS } from './validation.js';

const Meta = Type.Object({
  request_id: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
});

/** The success envelope of DECISIONS 1 around a payload schema. */
export const Envelope = <T extends TSchema>(data: T) =>
  Type.Object({ success: Type.Literal(true), data, error: Type.Null(), meta: Meta });

export const FieldErrorSchema = Type.Object({ field: Type.String(), message: Type.String() });

export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    data: Type.Null(),
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      details: Type.Union([
        Type.Array(FieldErrorSchema, { maxItems: MAX_FIELD_ERRORS }),
        Type.Object({}, { additionalProperties: true }),
        Type.Null(),
      ]),
    }),
    meta: Meta,
  },
  { $id: 'ErrorEnvelope', title: 'Error envelope' },
);

export type ErrorBody = Static<typeof ErrorEnvelope>;

/**
 * An error answer in a route's schema: a reference to the one shared ErrorEnvelope (added to the
 * app by buildApp), so the document defines it once and client generators make one type of it.
 */
export const errorResponse = (description: string) =>
  Type.Unsafe<ErrorBody>({ $ref: 'ErrorEnvelope#', description });

const meta = (request: FastifyRequest) => ({
  request_id: request.id,
  timestamp: isoNow(),
});

export const ok = <T>(request: FastifyRequest, data: T) => ({
  success: true as const,
  data,
  error: null,
  meta: meta(request),
});

/** The error envelope for a request id (also where no Fastify request exists). */
export const errorEnvelope = (requestId: string, err: AppError): ErrorBody => ({
  success: false,
  data: null,
  error: { code: err.code, message: err.message, details: err.details },
  meta: { request_id: requestId, timestamp: isoNow() },
});

export const errorBody = (request: FastifyRequest, err: AppError): ErrorBody =>
  errorEnvelope(request.id, err);
