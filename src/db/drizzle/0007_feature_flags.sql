-- Feature flags (spec 2.8 and 4.7, DECISIONS 7): the name is the key used in paths; the checks
-- repeat the name pattern and the percentage range the routes enforce.
CREATE TABLE "feature_flags" (
	"name" text PRIMARY KEY NOT NULL,
	"enabled" boolean DEFAULT false NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"rollout_percentage" integer DEFAULT 100 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "feature_flags_name_check" CHECK ("feature_flags"."name" ~ '^[a-z][a-z0-9_.-]{1,63}$'),
	CONSTRAINT "feature_flags_rollout_percentage_check" CHECK ("feature_flags"."rollout_percentage" between 0 and 100)
);
