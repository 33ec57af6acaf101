-- The knowledge base's glossary (issue 25): the abbreviations and pairs of names each document
-- defines, written with the job that made its chunks live, gone with the document; found by the
-- first word of a term or of its meaning.
CREATE TABLE "kb_definitions" (
	"document_id" uuid NOT NULL,
	"term" text NOT NULL,
	"means" text NOT NULL,
	"kind" text NOT NULL,
	CONSTRAINT "kb_definitions_document_id_term_pk" PRIMARY KEY("document_id","term")
);
--> statement-breakpoint
ALTER TABLE "kb_definitions" ADD CONSTRAINT "kb_definitions_document_id_kb_documents_id_fk" FOREIGN KEY ("document_id") REFERENCES "public"."kb_documents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "kb_definitions_term_idx" ON "kb_definitions" USING btree (lower(split_part("term", ' ', 1)));--> statement-breakpoint
CREATE INDEX "kb_definitions_means_idx" ON "kb_definitions" USING btree (lower(split_part("means", ' ', 1)));