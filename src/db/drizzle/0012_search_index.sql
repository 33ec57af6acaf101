-- The lexical index of issue 24 (ADR 0004): every instance holds one, built from kb_chunks.terms
-- and kept in step through kb_search_changes.
CREATE TABLE "kb_search_changes" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"document_id" uuid NOT NULL,
	"keep_job_id" uuid,
	"add_job_id" uuid
);
--> statement-breakpoint
CREATE TABLE "kb_search_state" (
	"id" smallint PRIMARY KEY NOT NULL,
	"seq" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "kb_search_state_single_row" CHECK ("kb_search_state"."id" = 1)
);
--> statement-breakpoint
ALTER TABLE "kb_chunks" ADD COLUMN "terms" text;
