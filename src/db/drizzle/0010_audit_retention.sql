CREATE TABLE "audit_checkpoints" (
	"id" uuid PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"through_seq" bigint NOT NULL,
	"through_hash" text NOT NULL,
	"purged" jsonb NOT NULL,
	"cutoffs" jsonb NOT NULL,
	"tombstone_count" integer NOT NULL,
	"tombstones_digest" text NOT NULL,
	"key_id" text NOT NULL,
	"signature" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_tombstones" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"id" uuid NOT NULL,
	"timestamp" timestamp with time zone NOT NULL,
	"action" text NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL,
	"checkpoint_id" uuid NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_tombstones" ADD CONSTRAINT "audit_tombstones_checkpoint_id_audit_checkpoints_id_fk" FOREIGN KEY ("checkpoint_id") REFERENCES "public"."audit_checkpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Audit retention by family (docs/operations.md "Retention"). The family of an entry, first rule
-- that holds: 'ehr' (EHR access and writes and the EHR's degradation events, 6 years), 'session'
-- (sign-in, sign-out, refresh, lockouts: every auth.* but auth.register, and
-- user.password_change_locked, 1 year), 'error' (any other failed entry, or an action ending in
-- 'failed' or 'error', 90 days), 'other' (kept). src/modules/audit/families.ts holds the same
-- rules; a test checks that both agree. Changing them takes a migration that replaces this
-- function and rebuilds the index.
CREATE FUNCTION audit_family(action text, success boolean) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN action LIKE 'ehr.%' OR action LIKE 'degradation.%' THEN 'ehr'
    WHEN (action LIKE 'auth.%' AND action <> 'auth.register')
         OR action = 'user.password_change_locked' THEN 'session'
    WHEN NOT success OR action LIKE '%failed' OR action LIKE '%error' THEN 'error'
    ELSE 'other'
  END
$$;
--> statement-breakpoint
-- The purge's lookup: the expired entries of one family, oldest first, without scanning others.
CREATE INDEX "audit_logs_family_idx" ON "audit_logs" USING btree (audit_family("action", "success"), "timestamp");
--> statement-breakpoint
-- The append-only guard of migration 0001, plus one way to DELETE: the retention purge, which sets
-- audit.purge for its transaction and has already written the entry's tombstone (same seq, id and
-- hash), so the chain's links survive the deletion; never the newest entry, from which the next
-- one is numbered and linked. TRUNCATE and every other change are refused.
CREATE OR REPLACE FUNCTION audit_logs_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE'
     AND OLD.actor_email IS NOT NULL
     AND NEW.actor_email = 'sha256:' || encode(sha256(convert_to(OLD.actor_email, 'UTF8')), 'hex')
     AND (to_jsonb(NEW) - 'actor_email') = (to_jsonb(OLD) - 'actor_email') THEN
    RETURN NEW;
  END IF;
  IF TG_OP = 'DELETE'
     AND current_setting('audit.purge', true) = 'on'
     AND EXISTS (SELECT 1 FROM audit_tombstones t
                 WHERE t.seq = OLD.seq AND t.id = OLD.id AND t.hash = OLD.hash)
     AND OLD.seq < (SELECT max(seq) FROM audit_logs) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit_logs is append-only' USING ERRCODE = 'insufficient_privilege';
END
$$;
--> statement-breakpoint
-- Checkpoints and tombstones are written once and never changed or removed.
CREATE FUNCTION audit_retention_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END
$$;
--> statement-breakpoint
CREATE TRIGGER audit_checkpoints_append_only BEFORE UPDATE OR DELETE ON audit_checkpoints
  FOR EACH ROW EXECUTE FUNCTION audit_retention_guard();
--> statement-breakpoint
CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints
  FOR EACH STATEMENT EXECUTE FUNCTION audit_retention_guard();
--> statement-breakpoint
CREATE TRIGGER audit_tombstones_append_only BEFORE UPDATE OR DELETE ON audit_tombstones
  FOR EACH ROW EXECUTE FUNCTION audit_retention_guard();
--> statement-breakpoint
CREATE TRIGGER audit_tombstones_no_truncate BEFORE TRUNCATE ON audit_tombstones
  FOR EACH STATEMENT EXECUTE FUNCTION audit_retention_guard();
