import multipart from '@fastify/multipart';
import { Type } from 'typebox';
import { Envelope, errorResponse, ok } from '../../platform/http/envelope.js';
import { callerOf, contextOf, type App } from '../../platform/http/types.js';
import type { FileStore } from '../../platform/file-store.js';
import {
  Document,
  DocumentIdParams,
  DocumentPage,
  DocumentQuery,
  Job,
  JobIdParams,
  JobPage,
  JobQuery,
  SearchQuery,
  SearchResults,
  UploadForm,
  toDocumentDto,
  toJobDto,
  toSearchHit,
} from './schema.js';
import type { SearchService } from './search.js';
import type { KnowledgeService } from './service.js';
import { MAX_UPLOAD_BYTES, receiveUpload } from './upload.js';

const tags = ['knowledge base'];
const admin = { config: { auth: 'admin' as const } };
const notFound = (what: string) => ({ 404: errorResponse(`No such ${what}`) });

export interface KnowledgeRouteDeps {
  knowledge: KnowledgeService;
  search: SearchService;
  files: FileStore;
}

/** Spec 4.5 and DECISIONS 6, all for administrators. */
export async function knowledgeRoutes(app: App, deps: KnowledgeRouteDeps): Promise<void> {
  await app.register(async (scoped) => {
    // Multipart is parsed only in this scope: every other route keeps answering it with 415.
    await scoped.register(multipart, { limits: { fileSize: MAX_UPLOAD_BYTES } });
    uploadRoute(scoped, deps);
  });
  documentRoutes(app, deps.knowledge);
  jobRoutes(app, deps.knowledge);
  app.get(
    '/api/admin/kb/search',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'searchKnowledgeBase',
        summary: 'Hybrid search over indexed, current passages (what the assistant retrieves)',
        querystring: SearchQuery,
        response: { 200: Envelope(SearchResults) },
      },
    },
    async (request) => {
      const { q, limit, category } = request.query;
      const hits = await deps.search.search(q, { limit, category });
      return ok(request, { items: hits.map(toSearchHit), total: hits.length });
    },
  );
}

function uploadRoute(app: App, deps: KnowledgeRouteDeps): void {
  app.post(
    '/api/admin/kb/documents',
    {
      ...admin,
      // The form is documented, not validated by the schema: it is read as a stream, field by
      // field, and checked while it arrives (receiveUpload). A JSON body gets 415 there.
      validatorCompiler: () => () => true,
      schema: {
        tags,
        operationId: 'uploadDocument',
        summary: 'Upload a PDF or UTF-8 text document for indexing',
        description:
          'multipart/form-data: `file` (PDF or TXT by content, at most 50 MB), `title`, `category`, optional `doc_key` (default: slug of the title). 202 with the new version and its pending job; 200 with the existing document when the current version has the same content.',
        consumes: ['multipart/form-data'],
        body: UploadForm,
        response: {
          200: Envelope(Document),
          202: Envelope(Document),
          413: errorResponse('File over 50 MB; the server stops reading'),
          415: errorResponse('Not multipart, or the file is neither PDF nor UTF-8 text'),
        },
      },
    },
    async (request, reply) => {
      const upload = await receiveUpload(request, deps.files);
      const { document, job, created } = await deps.knowledge.register(
        callerOf(request),
        upload,
        contextOf(request),
      );
      return reply.code(created ? 202 : 200).send(ok(request, toDocumentDto(document, job)));
    },
  );
}

function documentRoutes(app: App, knowledge: KnowledgeService): void {
  app.get(
    '/api/admin/kb/documents',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'listDocuments',
        summary: 'Documents, newest first (superseded versions included)',
        querystring: DocumentQuery,
        response: { 200: Envelope(DocumentPage) },
      },
    },
    async (request) => {
      const { offset, limit, status } = request.query;
      const { items, total } = await knowledge.page(status, offset, limit);
      const dtos = items.map((i) => toDocumentDto(i.document, i.job));
      return ok(request, { items: dtos, total, offset, limit });
    },
  );

  app.get(
    '/api/admin/kb/documents/:document_id',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'getDocument',
        summary: 'One document with its latest indexing job',
        params: DocumentIdParams,
        response: { 200: Envelope(Document), ...notFound('document') },
      },
    },
    async (request) => {
      const { document, job } = await knowledge.get(request.params.document_id);
      return ok(request, toDocumentDto(document, job));
    },
  );

  app.delete(
    '/api/admin/kb/documents/:document_id',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'deleteDocument',
        summary: 'Delete a document version with its chunks, vectors, jobs and stored file',
        params: DocumentIdParams,
        response: {
          200: Envelope(Type.Object({ message: Type.String() })),
          ...notFound('document'),
        },
      },
    },
    async (request) => {
      await knowledge.delete(callerOf(request), request.params.document_id, contextOf(request));
      return ok(request, { message: 'Document deleted' });
    },
  );

  app.post(
    '/api/admin/kb/documents/:document_id/reindex',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'reindexDocument',
        summary: 'Index the document again with a new job',
        params: DocumentIdParams,
        response: {
          202: Envelope(Document),
          ...notFound('document'),
          409: errorResponse('The document is a superseded version'),
        },
      },
    },
    async (request, reply) => {
      const { document, job } = await knowledge.reindex(
        callerOf(request),
        request.params.document_id,
        contextOf(request),
      );
      return reply.code(202).send(ok(request, toDocumentDto(document, job)));
    },
  );
}

function jobRoutes(app: App, knowledge: KnowledgeService): void {
  app.get(
    '/api/admin/kb/jobs',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'listIndexingJobs',
        summary: 'Indexing jobs, newest first',
        querystring: JobQuery,
        response: { 200: Envelope(JobPage) },
      },
    },
    async (request) => {
      const { offset, limit, state, doc_key } = request.query;
      const { rows, total } = await knowledge.jobsPage({ state, docKey: doc_key }, offset, limit);
      return ok(request, { items: rows.map(toJobDto), total, offset, limit });
    },
  );

  app.get(
    '/api/admin/kb/jobs/:job_id',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'getIndexingJob',
        summary: 'One indexing job with its progress',
        params: JobIdParams,
        response: { 200: Envelope(Job), ...notFound('job') },
      },
    },
    async (request) => ok(request, toJobDto(await knowledge.job(request.params.job_id))),
  );

  app.post(
    '/api/admin/kb/jobs/:job_id/retry',
    {
      ...admin,
      schema: {
        tags,
        operationId: 'retryIndexingJob',
        summary: 'Run a failed job again',
        params: JobIdParams,
        response: {
          202: Envelope(Job),
          ...notFound('job'),
          409: errorResponse('The job is not failed'),
        },
      },
    },
    async (request, reply) => {
      const job = await knowledge.retry(
        callerOf(request),
        request.params.job_id,
        contextOf(request),
      );
      return reply.code(202).send(ok(request, toJobDto(job)));
    },
  );
}
