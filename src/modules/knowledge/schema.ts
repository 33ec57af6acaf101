import { Type, type Static } from 'typebox';
import type { KbDocumentRow, KbJobRow } from '../../db/schema/index.js';
import { VisibleText } from '../../platform/http/text.js';
import { Uuid } from '../users/schema.js';
import type { SearchResult } from './search.js';

const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()]);

export const DocumentStatus = Type.Union([
  Type.Literal('uploaded'),
  Type.Literal('processing'),
  Type.Literal('indexed'),
  Type.Literal('failed'),
]);
export const JobState = Type.Union([
  Type.Literal('pending'),
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('superseded'),
]);

/** A stable key naming a document across versions: lower-case letters, digits, `.`, `_`, `-`. */
export const DOC_KEY_PATTERN = '^[a-z0-9](?:[a-z0-9._-]{0,126}[a-z0-9])?$';
export const Category = VisibleText(100);

export const Job = Type.Object({
  id: Uuid,
  document_id: Uuid,
  doc_key: Type.String(),
  state: JobState,
  total_chunks: Nullable(Type.Integer()),
  processed_chunks: Type.Integer(),
  retry_count: Type.Integer(),
  max_retries: Type.Integer(),
  superseded_by: Nullable(Uuid),
  error_details: Nullable(Type.Record(Type.String(), Type.Unknown())),
  run_after: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
});
export type JobDto = Static<typeof Job>;

export const Document = Type.Object({
  id: Uuid,
  title: Type.String(),
  category: Type.String(),
  filename: Type.String(),
  content_type: Type.String(),
  size_bytes: Type.Integer(),
  status: DocumentStatus,
  doc_key: Type.String(),
  content_hash: Type.String(),
  version: Type.Integer(),
  superseded_by: Nullable(Uuid),
  page_count: Nullable(Type.Integer()),
  chunk_count: Type.Integer(),
  error: Nullable(Type.String()),
  uploaded_by: Nullable(Uuid),
  created_at: Timestamp,
  updated_at: Timestamp,
  indexed_at: Nullable(Timestamp),
  job: Nullable(Job),
});
export type DocumentDto = Static<typeof Document>;

const page = <T extends Parameters<typeof Type.Array>[0]>(item: T) =>
  Type.Object({
    items: Type.Array(item),
    total: Type.Integer(),
    offset: Type.Integer(),
    limit: Type.Integer(),
  });
export const DocumentPage = page(Document);
export const JobPage = page(Job);

export const SearchHit = Type.Object({
  chunk_id: Uuid,
  document_id: Uuid,
  doc_key: Type.String(),
  title: Type.String(),
  version: Type.Integer(),
  page: Nullable(Type.Integer()),
  heading: Nullable(Type.String()),
  snippet: Type.String(),
  score: Type.Number({ minimum: 0, maximum: 1 }),
});
export const SearchResults = Type.Object({ items: Type.Array(SearchHit), total: Type.Integer() });

const Paging = {
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
};
export const DocumentQuery = Type.Object(
  { ...Paging, status: Type.Optional(DocumentStatus) },
  { additionalProperties: false },
);
export const JobQuery = Type.Object(
  {
    ...Paging,
    state: Type.Optional(JobState),
    doc_key: Type.Optional(Type.String({ pattern: DOC_KEY_PATTERN })),
  },
  { additionalProperties: false },
);
export const SearchQuery = Type.Object(
  {
    q: VisibleText(1000),
    limit: Type.Integer({ minimum: 1, maximum: 50, default: 5 }),
    category: Type.Optional(Category),
  },
  { additionalProperties: false },
);
/** The upload's form, for the API documentation: the route reads and checks the stream itself. */
export const UploadForm = Type.Object(
  {
    file: Type.String({
      format: 'binary',
      contentMediaType: 'application/octet-stream',
      description: 'PDF or UTF-8 text (typed by content, not by name), at most 50 MB',
    }),
    title: VisibleText(200),
    category: Category,
    doc_key: Type.Optional(Type.String({ pattern: DOC_KEY_PATTERN, maxLength: 128 })),
  },
  { additionalProperties: false },
);

export const DocumentIdParams = Type.Object({ document_id: Uuid }, { additionalProperties: false });
export const JobIdParams = Type.Object({ job_id: Uuid }, { additionalProperties: false });

const iso = (d: Date | null) => d?.toISOString() ?? null;

export function toJobDto(j: KbJobRow): JobDto {
  return {
    id: j.id,
    document_id: j.documentId,
    doc_key: j.docKey,
    state: j.state,
    total_chunks: j.totalChunks,
    processed_chunks: j.processedChunks,
    retry_count: j.retryCount,
    max_retries: j.maxRetries,
    superseded_by: j.supersededBy,
    error_details: j.errorDetails ?? null,
    run_after: j.runAfter.toISOString(),
    created_at: j.createdAt.toISOString(),
    updated_at: j.updatedAt.toISOString(),
    started_at: iso(j.startedAt),
    finished_at: iso(j.finishedAt),
  };
}

export function toDocumentDto(d: KbDocumentRow, job: KbJobRow | null): DocumentDto {
  return {
    id: d.id,
    title: d.title,
    category: d.category,
    filename: d.filename,
    content_type: d.contentType,
    size_bytes: d.sizeBytes,
    status: d.status,
    doc_key: d.docKey,
    content_hash: d.contentHash,
    version: d.version,
    superseded_by: d.supersededBy,
    page_count: d.pageCount,
    chunk_count: d.chunkCount,
    error: d.error,
    uploaded_by: d.uploadedBy,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    indexed_at: iso(d.indexedAt),
    job: job === null ? null : toJobDto(job),
  };
}

export function toSearchHit(r: SearchResult): Static<typeof SearchHit> {
  return {
    chunk_id: r.chunkId,
    document_id: r.documentId,
    doc_key: r.docKey,
    title: r.title,
    version: r.version,
    page: r.page,
    heading: r.heading,
    snippet: r.snippet,
    score: r.score,
  };
}
