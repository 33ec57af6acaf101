import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { users } from './users.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

export const DOCUMENT_STATUSES = ['uploaded', 'processing', 'indexed', 'failed'] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];
export const JOB_STATES = ['pending', 'running', 'completed', 'failed', 'superseded'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** One version of a knowledge-base document (DECISIONS 6); a new upload of a doc_key is a new row. */
export const kbDocuments = pgTable(
  'kb_documents',
  {
    id: uuid('id').primaryKey(),
    title: text('title').notNull(),
    category: text('category').notNull(),
    filename: text('filename').notNull(),
    contentType: text('content_type').notNull(),
    sizeBytes: integer('size_bytes').notNull(),
    status: text('status', { enum: DOCUMENT_STATUSES }).notNull().default('uploaded'),
    docKey: text('doc_key').notNull(),
    contentHash: text('content_hash').notNull(),
    version: integer('version').notNull().default(1),
    supersededBy: uuid('superseded_by'),
    pageCount: integer('page_count'),
    chunkCount: integer('chunk_count').notNull().default(0),
    error: text('error'),
    /** Where the original lives in the FileStore. */
    storageKey: text('storage_key').notNull(),
    uploadedBy: uuid('uploaded_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    indexedAt: ts('indexed_at'),
  },
  (t) => [
    uniqueIndex('kb_documents_doc_key_version_key').on(t.docKey, t.version),
    // One current (not superseded) version per doc_key: concurrent uploads cannot fork it.
    uniqueIndex('kb_documents_current_key')
      .on(t.docKey)
      .where(sql`${t.supersededBy} is null`),
    index('kb_documents_created_idx').on(t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    index('kb_documents_status_created_idx').on(
      t.status,
      t.createdAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
    check(
      'kb_documents_status_check',
      sql`${t.status} in ('uploaded', 'processing', 'indexed', 'failed')`,
    ),
  ],
);

/**
 * Indexing jobs: the source of truth for what is to be done, whichever runner (BullMQ or the
 * in-process one) does it. A runner owns a running job until `lease_until`; a job still running
 * after its lease ran out (its process died) is picked up again.
 */
export const kbIndexingJobs = pgTable(
  'kb_indexing_jobs',
  {
    id: uuid('id').primaryKey(),
    documentId: uuid('document_id')
      .notNull()
      .references(() => kbDocuments.id, { onDelete: 'cascade' }),
    docKey: text('doc_key').notNull(),
    state: text('state', { enum: JOB_STATES }).notNull().default('pending'),
    totalChunks: integer('total_chunks'),
    processedChunks: integer('processed_chunks').notNull().default(0),
    retryCount: integer('retry_count').notNull().default(0),
    maxRetries: integer('max_retries').notNull().default(3),
    supersededBy: uuid('superseded_by'),
    errorDetails: jsonb('error_details').$type<Record<string, unknown>>(),
    /** Not before this time (retry backoff). */
    runAfter: ts('run_after').notNull().defaultNow(),
    leaseUntil: ts('lease_until'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    index('kb_jobs_document_idx').on(t.documentId, t.createdAt),
    index('kb_jobs_state_idx').on(t.state, t.runAfter),
    index('kb_jobs_doc_key_idx').on(t.docKey, t.createdAt),
    check(
      'kb_jobs_state_check',
      sql`${t.state} in ('pending', 'running', 'completed', 'failed', 'superseded')`,
    ),
  ],
);

/**
 * Searchable passages of a document version, with their full-text vector. Search reads only
 * chunks that are `active` (their job completed) and not `superseded` (a newer version exists).
 */
export const kbChunks = pgTable(
  'kb_chunks',
  {
    id: uuid('id').primaryKey(),
    documentId: uuid('document_id')
      .notNull()
      .references(() => kbDocuments.id, { onDelete: 'cascade' }),
    docKey: text('doc_key').notNull(),
    version: integer('version').notNull(),
    category: text('category').notNull(),
    chunkIndex: integer('chunk_index').notNull(),
    text: text('text').notNull(),
    page: integer('page'),
    heading: text('heading'),
    superseded: boolean('superseded').notNull().default(false),
    /** The job that wrote the chunk; its chunks become `active` together when it completes. */
    jobId: uuid('job_id').notNull(),
    active: boolean('active').notNull().default(false),
    embeddingModel: text('embedding_model').notNull(),
    /** Heading, document title terms and text; expanded abbreviations are part of `search_text`. */
    searchText: text('search_text').notNull(),
    /**
     * `search_text` analysed for the lexical index (`analyse`: terms separated by spaces), written
     * with the chunk so that an index is built without analysing every chunk again. Null for
     * chunks written before it existed: the index analyses their `search_text` itself.
     */
    terms: text('terms'),
    tsv: tsvector('tsv')
      .notNull()
      .generatedAlwaysAs(sql`to_tsvector('english', search_text)`),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    // A reindex writes a second set next to the live one until it completes: unique per job.
    uniqueIndex('kb_chunks_job_index_key').on(t.jobId, t.chunkIndex),
    index('kb_chunks_document_idx').on(t.documentId),
    // Search only ever reads active, current chunks.
    index('kb_chunks_tsv_idx')
      .using('gin', t.tsv)
      .where(sql`${t.active} and not ${t.superseded}`),
  ],
);

export type KbDocumentRow = typeof kbDocuments.$inferSelect;
export type KbJobRow = typeof kbIndexingJobs.$inferSelect;
export type KbChunkRow = typeof kbChunks.$inferSelect;

/**
 * The knowledge base's glossary: the abbreviations and pairs of names each document defines
 * ("latent TB infection (LTBI)", "lisinopril (Zestril)": definitions.ts), written with the job
 * that made its chunks live and gone with the document. The entries of the live documents that a
 * question writes are read for each chat turn and search (glossary.ts).
 */
export const kbDefinitions = pgTable(
  'kb_definitions',
  {
    documentId: uuid('document_id')
      .notNull()
      .references(() => kbDocuments.id, { onDelete: 'cascade' }),
    /** As written: "LTBI", "lisinopril". */
    term: text('term').notNull(),
    /** As written: "latent TB infection", "Zestril". */
    means: text('means').notNull(),
    kind: text('kind', { enum: ['abbreviation', 'name'] }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.documentId, t.term] }),
    // A question's words find the entries that write them: by the term's first word, and by the
    // meaning's (a long form, or the other name of a pair).
    index('kb_definitions_term_idx').on(sql`lower(split_part(${t.term}, ' ', 1))`),
    index('kb_definitions_means_idx').on(sql`lower(split_part(${t.means}, ' ', 1))`),
  ],
);
