-- Citations and tool calls are written once and read back whole, never queried inside: `json`
-- keeps the text as written, so reading a thread skips jsonb's re-serialisation.
ALTER TABLE "messages" ALTER COLUMN "citations" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "messages" ALTER COLUMN "citations" SET DATA TYPE json USING "citations"::json;--> statement-breakpoint
ALTER TABLE "messages" ALTER COLUMN "citations" SET DEFAULT '[]'::json;--> statement-breakpoint
ALTER TABLE "messages" ALTER COLUMN "tool_calls" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "messages" ALTER COLUMN "tool_calls" SET DATA TYPE json USING "tool_calls"::json;--> statement-breakpoint
ALTER TABLE "messages" ALTER COLUMN "tool_calls" SET DEFAULT '[]'::json;
