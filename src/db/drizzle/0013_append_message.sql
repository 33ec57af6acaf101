-- Appending a message in one statement (issue 24): the transaction it replaces (lock the
-- conversation, read the branch's tail, insert, count) held a connection across five round trips,
-- and on the embedded database every other statement of every turn waited behind it.
-- Each statement of a VOLATILE function takes a new snapshot (READ COMMITTED), so the branch is
-- read after the lock and sees every append committed before it, as the transaction did.
-- `outcome`: 'created', 'existing' (the branch already holds p_client_message_id), 'no conversation'
-- (absent, or not p_user_id's) or 'no branch'; `message` is the created or existing row.
-- p_title (a turn's question, cut to a title) names the conversation if it has no title yet.
CREATE FUNCTION append_message(
  p_user_id uuid,
  p_conversation_id uuid,
  p_branch_id text,
  p_client_message_id text,
  p_id uuid,
  p_parent_message_id uuid,
  p_role text,
  p_content text,
  p_citations json,
  p_tool_calls json,
  p_interrupted boolean,
  p_usage json,
  p_title text
) RETURNS TABLE (outcome text, message messages) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_last_seq integer;
  v_branch_exists boolean;
  v_tail uuid;
  v_existing uuid;
  v_row messages;
BEGIN
  SELECT c.last_seq INTO v_last_seq FROM conversations c
    WHERE c.id = p_conversation_id AND c.user_id = p_user_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'no conversation'::text, NULL::messages;
    RETURN;
  END IF;
  SELECT b.id IS NOT NULL,
         coalesce((SELECT m.id FROM messages m
                    WHERE m.conversation_id = p_conversation_id AND m.branch_id = p_branch_id
                    ORDER BY m.seq DESC LIMIT 1),
                  b.parent_message_id),
         (SELECT m.id FROM messages m
           WHERE m.conversation_id = p_conversation_id AND m.branch_id = p_branch_id
             AND m.client_message_id = p_client_message_id)
    INTO v_branch_exists, v_tail, v_existing
    FROM (SELECT 1) AS one
    LEFT JOIN branches b ON b.conversation_id = p_conversation_id AND b.id = p_branch_id;
  IF NOT v_branch_exists THEN
    RETURN QUERY SELECT 'no branch'::text, NULL::messages;
    RETURN;
  END IF;
  IF v_existing IS NOT NULL THEN
    SELECT m.* INTO v_row FROM messages m
      WHERE m.id = v_existing AND m.conversation_id = p_conversation_id;
    IF FOUND THEN
      RETURN QUERY SELECT 'existing'::text, v_row;
      RETURN;
    END IF;
  END IF;
  INSERT INTO messages (id, conversation_id, branch_id, seq, parent_message_id, role, content,
                        citations, tool_calls, client_message_id, interrupted, usage, created_at)
    VALUES (p_id, p_conversation_id, p_branch_id, v_last_seq + 1,
            coalesce(p_parent_message_id, v_tail), p_role, p_content, p_citations, p_tool_calls,
            p_client_message_id, p_interrupted, p_usage, clock_timestamp())
    RETURNING * INTO v_row;
  UPDATE conversations
    SET message_count = message_count + 1, last_seq = v_last_seq + 1, updated_at = v_row.created_at,
        title = CASE WHEN title = '' AND coalesce(p_title, '') <> '' THEN p_title ELSE title END
    WHERE id = p_conversation_id;
  RETURN QUERY SELECT 'created'::text, v_row;
END
$$;
