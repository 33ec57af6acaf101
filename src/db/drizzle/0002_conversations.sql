CREATE TABLE "branches" (
	"conversation_id" uuid NOT NULL,
	"id" text NOT NULL,
	"parent_message_id" uuid,
	"parent_branch_id" text,
	"parent_seq" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "branches_conversation_id_id_pk" PRIMARY KEY("conversation_id","id"),
	CONSTRAINT "branches_fork_point_check" CHECK (("branches"."parent_message_id" is null) = ("branches"."parent_branch_id" is null)
        and ("branches"."parent_branch_id" is null) = ("branches"."parent_seq" is null))
);
--> statement-breakpoint
CREATE TABLE "conversation_counts" (
	"user_id" uuid NOT NULL,
	"archived" boolean NOT NULL,
	"folder_key" text NOT NULL,
	"n" integer NOT NULL,
	CONSTRAINT "conversation_counts_user_id_archived_folder_key_pk" PRIMARY KEY("user_id","archived","folder_key")
);
--> statement-breakpoint
CREATE TABLE "conversations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"title" text NOT NULL,
	"archived" boolean DEFAULT false NOT NULL,
	"folder_id" text,
	"message_count" integer DEFAULT 0 NOT NULL,
	"last_seq" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"id" uuid PRIMARY KEY NOT NULL,
	"conversation_id" uuid NOT NULL,
	"branch_id" text NOT NULL,
	"seq" integer NOT NULL,
	"parent_message_id" uuid,
	"role" text NOT NULL,
	"content" text NOT NULL,
	"citations" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"tool_calls" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"client_message_id" text,
	"interrupted" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "messages_role_check" CHECK ("messages"."role" in ('user', 'assistant', 'system', 'tool'))
);
--> statement-breakpoint
ALTER TABLE "branches" ADD CONSTRAINT "branches_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversation_counts" ADD CONSTRAINT "conversation_counts_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_branch_fk" FOREIGN KEY ("conversation_id","branch_id") REFERENCES "public"."branches"("conversation_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "conversations_user_updated_idx" ON "conversations" USING btree ("user_id","updated_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "conversations_user_archived_updated_idx" ON "conversations" USING btree ("user_id","archived","updated_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "conversations_user_folder_updated_idx" ON "conversations" USING btree ("user_id","folder_id","updated_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "conversations"."folder_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "messages_conversation_seq_key" ON "messages" USING btree ("conversation_id","seq");--> statement-breakpoint
CREATE INDEX "messages_thread_idx" ON "messages" USING btree ("conversation_id","branch_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_client_id_key" ON "messages" USING btree ("conversation_id","branch_id","client_message_id") WHERE "messages"."client_message_id" is not null;--> statement-breakpoint
-- conversation_counts follows every insert, delete and move between (archived, folder) of a
-- conversation, in the same transaction, so a page's total is read without counting rows.
CREATE FUNCTION conversation_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE conversation_counts SET n = n - 1
      WHERE user_id = OLD.user_id AND archived = OLD.archived
        AND folder_key = coalesce(OLD.folder_id, '');
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO conversation_counts (user_id, archived, folder_key, n)
      VALUES (NEW.user_id, NEW.archived, coalesce(NEW.folder_id, ''), 1)
      ON CONFLICT (user_id, archived, folder_key) DO UPDATE SET n = conversation_counts.n + 1;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER conversation_counts_insert_delete AFTER INSERT OR DELETE ON conversations
  FOR EACH ROW EXECUTE FUNCTION conversation_counts_track();
--> statement-breakpoint
CREATE TRIGGER conversation_counts_move AFTER UPDATE OF user_id, archived, folder_id ON conversations
  FOR EACH ROW
  WHEN (OLD.user_id IS DISTINCT FROM NEW.user_id OR OLD.archived IS DISTINCT FROM NEW.archived
        OR OLD.folder_id IS DISTINCT FROM NEW.folder_id)
  EXECUTE FUNCTION conversation_counts_track();
