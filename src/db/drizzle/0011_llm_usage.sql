-- Token usage of an answer (issue 22 item 6): messages.usage is { provider, model, inputTokens,
-- outputTokens }, or null when the model reported none (messages stored before this have none).
CREATE TABLE "llm_usage_hourly" (
	"hour" timestamp with time zone NOT NULL,
	"provider" text NOT NULL,
	"model" text NOT NULL,
	"shard" smallint NOT NULL,
	"answers" bigint NOT NULL,
	"input_tokens" bigint NOT NULL,
	"output_tokens" bigint NOT NULL,
	CONSTRAINT "llm_usage_hourly_hour_provider_model_shard_pk" PRIMARY KEY("hour","provider","model","shard")
);
--> statement-breakpoint
CREATE TABLE "llm_usage_totals" (
	"provider" text NOT NULL,
	"model" text NOT NULL,
	"shard" smallint NOT NULL,
	"answers" bigint NOT NULL,
	"input_tokens" bigint NOT NULL,
	"output_tokens" bigint NOT NULL,
	CONSTRAINT "llm_usage_totals_provider_model_shard_pk" PRIMARY KEY("provider","model","shard")
);
--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "usage" json;--> statement-breakpoint
-- Every answer inserted with usage is added to its hour's row and to the all-time row, in the same
-- transaction, so the admin panel's totals read a few hundred rows instead of every answer. The
-- 16 shards (by conversation) keep answers stored at once in different conversations from
-- queueing on one row's lock. Deleting a message does not lower the totals: the tokens were spent.
CREATE FUNCTION llm_usage_track() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  part smallint := hashtext(NEW.conversation_id::text) & 15;
  tokens_in bigint := (NEW.usage->>'inputTokens')::bigint;
  tokens_out bigint := (NEW.usage->>'outputTokens')::bigint;
BEGIN
  INSERT INTO llm_usage_hourly AS u
      (hour, provider, model, shard, answers, input_tokens, output_tokens)
    VALUES (date_trunc('hour', NEW.created_at, 'UTC'), NEW.usage->>'provider', NEW.usage->>'model',
            part, 1, tokens_in, tokens_out)
    ON CONFLICT (hour, provider, model, shard) DO UPDATE SET answers = u.answers + 1,
      input_tokens = u.input_tokens + EXCLUDED.input_tokens,
      output_tokens = u.output_tokens + EXCLUDED.output_tokens;
  INSERT INTO llm_usage_totals AS u (provider, model, shard, answers, input_tokens, output_tokens)
    VALUES (NEW.usage->>'provider', NEW.usage->>'model', part, 1, tokens_in, tokens_out)
    ON CONFLICT (provider, model, shard) DO UPDATE SET answers = u.answers + 1,
      input_tokens = u.input_tokens + EXCLUDED.input_tokens,
      output_tokens = u.output_tokens + EXCLUDED.output_tokens;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER llm_usage_insert AFTER INSERT ON messages
  FOR EACH ROW WHEN (NEW.usage IS NOT NULL) EXECUTE FUNCTION llm_usage_track();
