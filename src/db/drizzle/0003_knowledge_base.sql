CREATE TABLE "kb_chunks" (
	"id" uuid PRIMARY KEY NOT NULL,
	"document_id" uuid NOT NULL,
	"doc_key" text NOT NULL,
	"version" integer NOT NULL,
	"category" text NOT NULL,
	"chunk_index" integer NOT NULL,
	"text" text NOT NULL,
	"page" integer,
	"heading" text,
	"superseded" boolean DEFAULT false NOT NULL,
	"job_id" uuid NOT NULL,
	"active" boolean DEFAULT false NOT NULL,
	"embedding_model" text NOT NULL,
	"search_text" text NOT NULL,
	"tsv" "tsvector" GENERATED ALWAYS AS (to_tsvector('english', search_text)) STORED NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "kb_documents" (
	"id" uuid PRIMARY KEY NOT NULL,
	"title" text NOT NULL,
	"category" text NOT NULL,
	"filename" text NOT NULL,
	"content_type" text NOT NULL,
	"size_bytes" integer NOT NULL,
	"status" text DEFAULT 'uploaded' NOT NULL,
	"doc_key" text NOT NULL,
	"content_hash" text NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"superseded_by" uuid,
	"page_count" integer,
	"chunk_count" integer DEFAULT 0 NOT NULL,
	"error" text,
	"storage_key" text NOT NULL,
	"uploaded_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"indexed_at" timestamp with time zone,
	CONSTRAINT "kb_documents_status_check" CHECK ("kb_documents"."status" in ('uploaded', 'processing', 'indexed', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "kb_indexing_jobs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"document_id" uuid NOT NULL,
	"doc_key" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"total_chunks" integer,
	"processed_chunks" integer DEFAULT 0 NOT NULL,
	"retry_count" integer DEFAULT 0 NOT NULL,
	"max_retries" integer DEFAULT 3 NOT NULL,
	"superseded_by" uuid,
	"error_details" jsonb,
	"run_after" timestamp with time zone DEFAULT now() NOT NULL,
	"lease_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	CONSTRAINT "kb_jobs_state_check" CHECK ("kb_indexing_jobs"."state" in ('pending', 'running', 'completed', 'failed', 'superseded'))
);
--> statement-breakpoint
ALTER TABLE "kb_chunks" ADD CONSTRAINT "kb_chunks_document_id_kb_documents_id_fk" FOREIGN KEY ("document_id") REFERENCES "public"."kb_documents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD CONSTRAINT "kb_documents_uploaded_by_users_id_fk" FOREIGN KEY ("uploaded_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_indexing_jobs" ADD CONSTRAINT "kb_indexing_jobs_document_id_kb_documents_id_fk" FOREIGN KEY ("document_id") REFERENCES "public"."kb_documents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "kb_chunks_job_index_key" ON "kb_chunks" USING btree ("job_id","chunk_index");--> statement-breakpoint
CREATE INDEX "kb_chunks_document_idx" ON "kb_chunks" USING btree ("document_id");--> statement-breakpoint
CREATE INDEX "kb_chunks_tsv_idx" ON "kb_chunks" USING gin ("tsv") WHERE "kb_chunks"."active" and not "kb_chunks"."superseded";--> statement-breakpoint
CREATE UNIQUE INDEX "kb_documents_doc_key_version_key" ON "kb_documents" USING btree ("doc_key","version");--> statement-breakpoint
CREATE UNIQUE INDEX "kb_documents_current_key" ON "kb_documents" USING btree ("doc_key") WHERE "kb_documents"."superseded_by" is null;--> statement-breakpoint
CREATE INDEX "kb_documents_created_idx" ON "kb_documents" USING btree ("created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "kb_documents_status_created_idx" ON "kb_documents" USING btree ("status","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "kb_jobs_document_idx" ON "kb_indexing_jobs" USING btree ("document_id","created_at");--> statement-breakpoint
CREATE INDEX "kb_jobs_state_idx" ON "kb_indexing_jobs" USING btree ("state","run_after");--> statement-breakpoint
CREATE INDEX "kb_jobs_doc_key_idx" ON "kb_indexing_jobs" USING btree ("doc_key","created_at");