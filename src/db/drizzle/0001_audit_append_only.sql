-- The audit log is append-only. The one permitted change is redacting actor_email to the digest the
-- entry hash already covers ('sha256:' || hex(sha256(email))), done when an account is deleted.
CREATE FUNCTION audit_logs_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE'
     AND OLD.actor_email IS NOT NULL
     AND NEW.actor_email = 'sha256:' || encode(sha256(convert_to(OLD.actor_email, 'UTF8')), 'hex')
     AND (to_jsonb(NEW) - 'actor_email') = (to_jsonb(OLD) - 'actor_email') THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'audit_logs is append-only' USING ERRCODE = 'insufficient_privilege';
END
$$;
--> statement-breakpoint
CREATE TRIGGER audit_logs_append_only BEFORE UPDATE OR DELETE ON audit_logs
  FOR EACH ROW EXECUTE FUNCTION audit_logs_guard();
--> statement-breakpoint
CREATE TRIGGER audit_logs_no_truncate BEFORE TRUNCATE ON audit_logs
  FOR EACH STATEMENT EXECUTE FUNCTION audit_logs_guard();
