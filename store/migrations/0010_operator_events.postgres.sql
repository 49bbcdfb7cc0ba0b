-- The operator events: takeover_started and takeover_ended (a hold,
-- 0009_holds), help_requested (request_help) and operator_input (an
-- operator's input through the live view).
-- Rebuilt as SQLite's is, so that both dialects make the same objects:
-- rows and ids kept, the identity going on after the highest id, the
-- append-only trigger made again (its function stays from 0001).
CREATE TABLE browser_space_events_new (
  id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  space_id    TEXT NOT NULL REFERENCES browser_spaces (id) ON DELETE CASCADE,
  task_id     TEXT REFERENCES browser_space_tasks (id) ON DELETE CASCADE,
  sequence    BIGINT NOT NULL CHECK (sequence >= 1),
  kind        TEXT NOT NULL CHECK (kind IN ('queued', 'started', 'completed', 'failed',
                'cancel_requested', 'cancelled', 'space_opened', 'space_closed', 'space_error',
                'network_blocked', 'dialog', 'tab_opened', 'download',
                'takeover_started', 'takeover_ended', 'help_requested', 'operator_input')),
  payload     TEXT NOT NULL DEFAULT '{}' CHECK (length(payload) <= 65536),
  created_at  BIGINT NOT NULL,
  UNIQUE (space_id, sequence)
);
INSERT INTO browser_space_events_new
  (id, space_id, task_id, sequence, kind, payload, created_at)
  OVERRIDING SYSTEM VALUE
  SELECT id, space_id, task_id, sequence, kind, payload, created_at
  FROM browser_space_events;
SELECT setval(pg_get_serial_sequence('browser_space_events_new', 'id'),
  COALESCE((SELECT max(id) FROM browser_space_events_new), 0) + 1, false);
DROP TABLE browser_space_events;
ALTER TABLE browser_space_events_new RENAME TO browser_space_events;
CREATE TRIGGER browser_space_events_no_update
  BEFORE UPDATE ON browser_space_events
  FOR EACH ROW EXECUTE FUNCTION browser_space_events_append_only();
