-- The operator events: takeover_started and takeover_ended (a hold,
-- 0009_holds), help_requested (request_help) and operator_input (an
-- operator's input through the live view).
-- SQLite cannot change a CHECK in place, so the table is rebuilt, rows,
-- ids and all, and its append-only trigger made again.
CREATE TABLE browser_space_events_new (
  id          INTEGER PRIMARY KEY,
  space_id    TEXT NOT NULL REFERENCES browser_spaces (id) ON DELETE CASCADE,
  task_id     TEXT REFERENCES browser_space_tasks (id) ON DELETE CASCADE,
  sequence    INTEGER NOT NULL CHECK (sequence >= 1),
  kind        TEXT NOT NULL CHECK ((kind = 'queued' OR kind = 'started' OR kind = 'completed' OR kind = 'failed' OR kind = 'cancel_requested' OR kind = 'cancelled' OR kind = 'space_opened' OR kind = 'space_closed' OR kind = 'space_error' OR kind = 'network_blocked' OR
                kind = 'dialog' OR kind = 'tab_opened' OR kind = 'download' OR
                kind = 'takeover_started' OR kind = 'takeover_ended' OR kind = 'help_requested' OR kind = 'operator_input')),
  payload     TEXT NOT NULL DEFAULT '{}' CHECK (length(payload) <= 65536),
  created_at  INTEGER NOT NULL,
  UNIQUE (space_id, sequence)
);
INSERT INTO browser_space_events_new
  (id, space_id, task_id, sequence, kind, payload, created_at)
  SELECT id, space_id, task_id, sequence, kind, payload, created_at
  FROM browser_space_events;
DROP TABLE browser_space_events;
ALTER TABLE browser_space_events_new RENAME TO browser_space_events;
CREATE TRIGGER browser_space_events_no_update
  BEFORE UPDATE ON browser_space_events
  BEGIN SELECT RAISE(ABORT, 'browser_space_events is append-only'); END;
