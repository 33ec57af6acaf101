import SwaggerParser from '@apidevtools/swagger-parser';

/** A JSON Schema (draft 2020-12, as OpenAPI 3.1 uses) from the document, dereferenced. */
export type Schema = Record<string, unknown>;

export interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: Schema;
}

export interface RequestBody {
  /** Media type to schema, e.g. `application/json` or `multipart/form-data`. */
  content: Map<string, Schema>;
  required: boolean;
}

export interface ResponseSpec {
  /** Documented media types and their schemas; empty when the answer has no body. */
  content: Map<string, Schema | undefined>;
}

export interface Operation {
  id: string;
  method: string;
  /** The path template, `/conversations/{conversation_id}`. */
  path: string;
  parameters: Parameter[];
  body: RequestBody | null;
  responses: Map<string, ResponseSpec>;
  /** Needs a bearer token (no `security: []`). */
  authenticated: boolean;
  /** Roles the bearer requirement names (OpenAPI 3.1), e.g. `admin`. */
  roles: string[];
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'] as const;

interface RawOperation {
  operationId?: string;
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
  security?: unknown[];
}

interface RawDocument {
  paths?: Record<string, Partial<Record<(typeof METHODS)[number], RawOperation>>>;
  security?: unknown[];
}

/**
 * Checks the document against the OpenAPI 3.1 schema (swagger-parser), then lists its operations
 * with every $ref resolved: what the fuzzer sends and what it expects back come from here only.
 */
export async function loadOperations(document: unknown): Promise<Operation[]> {
  await SwaggerParser.validate(structuredClone(document) as never);
  const api = (await SwaggerParser.dereference(structuredClone(document) as never)) as RawDocument;
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(api.paths ?? {})) {
    for (const method of METHODS) {
      const raw = item[method];
      if (raw !== undefined) operations.push(toOperation(method.toUpperCase(), path, raw, api));
    }
  }
  return operations;
}

/** The operation's id, or `METHOD /path` where the document gives none. */
export const operationIdOf = (method: string, path: string, raw: { operationId?: string }) =>
  raw.operationId ?? `${method.toUpperCase()} ${path}`;

function toOperation(method: string, path: string, raw: RawOperation, api: RawDocument): Operation {
  const security = raw.security ?? api.security ?? [];
  return {
    id: operationIdOf(method, path, raw),
    method,
    path,
    parameters: (raw.parameters ?? [])
      .filter((p) => p.in === 'path' || p.in === 'query')
      .map((p) => ({
        name: p.name,
        in: p.in as 'path' | 'query',
        required: p.required === true,
        schema: p.schema ?? {},
      })),
    body:
      raw.requestBody === undefined
        ? null
        : {
            required: raw.requestBody.required === true,
            content: new Map(
              Object.entries(raw.requestBody.content ?? {}).map(([type, media]) => [
                type,
                media.schema ?? {},
              ]),
            ),
          },
    responses: new Map(
      Object.entries(raw.responses ?? {}).map(([status, response]) => [
        status,
        {
          content: new Map(
            Object.entries(response.content ?? {}).map(([type, media]) => [type, media.schema]),
          ),
        },
      ]),
    ),
    authenticated: security.length > 0,
    roles: security.flatMap((requirement) =>
      Object.values(requirement as Record<string, string[]>).flat(),
    ),
  };
}
