-- The admin panel's audit-log filters (issue 12). The action index is rebuilt with
-- text_pattern_ops so that one index serves the exact filter (action = 'ehr.read') and the prefix
-- filter (action LIKE 'ehr.%') whatever the database's collation, both ordered by seq. The
-- partial index serves "entries about this user" (resource_type 'user', resource_id the id).
DROP INDEX "audit_logs_action_idx";--> statement-breakpoint
CREATE INDEX "audit_logs_user_resource_idx" ON "audit_logs" USING btree ("resource_id","seq") WHERE "audit_logs"."resource_type" = 'user';--> statement-breakpoint
CREATE INDEX "audit_logs_action_idx" ON "audit_logs" USING btree ("action" text_pattern_ops,"seq");