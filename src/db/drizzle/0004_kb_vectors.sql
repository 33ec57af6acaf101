CREATE TABLE "kb_vector_state" (
	"id" smallint PRIMARY KEY NOT NULL,
	"seq" bigint DEFAULT 0 NOT NULL,
	"epoch" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "kb_vector_state_single_row" CHECK ("kb_vector_state"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE "kb_vectors" (
	"chunk_id" uuid PRIMARY KEY NOT NULL,
	"document_id" uuid NOT NULL,
	"doc_key" text NOT NULL,
	"category" text NOT NULL,
	"job_id" uuid NOT NULL,
	"model" text NOT NULL,
	"embedding" "bytea" NOT NULL,
	"seq" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "kb_vectors" ADD CONSTRAINT "kb_vectors_chunk_id_kb_chunks_id_fk" FOREIGN KEY ("chunk_id") REFERENCES "public"."kb_chunks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "kb_vectors_model_seq_idx" ON "kb_vectors" USING btree ("model","seq","chunk_id");--> statement-breakpoint
CREATE INDEX "kb_vectors_document_idx" ON "kb_vectors" USING btree ("document_id");--> statement-breakpoint
CREATE INDEX "kb_vectors_job_idx" ON "kb_vectors" USING btree ("job_id");