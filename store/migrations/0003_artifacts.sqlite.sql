-- A task's artifacts (a screenshot): written by actor.finish in the
-- transaction that finishes the task, at most one of each name per task,
-- at most CM_ARTIFACT_MAX (4 MiB) of bytes.  sha256 and size are the
-- store's own, computed from the bytes it writes.  Deleting the task or
-- its Space deletes them.  Served with their mime type, so only image
-- types are ever stored.
CREATE TABLE browser_space_artifacts (
  id          TEXT PRIMARY KEY CHECK (length(id) <= 64),
  task_id     TEXT NOT NULL REFERENCES browser_space_tasks (id) ON DELETE CASCADE,
  space_id    TEXT NOT NULL REFERENCES browser_spaces (id) ON DELETE CASCADE,
  name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
  mime        TEXT NOT NULL CHECK ((mime = 'image/png' OR mime = 'image/jpeg')),
  bytes       BLOB NOT NULL CHECK (length(bytes) BETWEEN 1 AND 4194304),
  sha256      TEXT NOT NULL CHECK (length(sha256) = 64),
  size        INTEGER NOT NULL CHECK (size = length(bytes)),
  created_at  INTEGER NOT NULL,
  UNIQUE (task_id, name)
);
CREATE INDEX browser_space_artifacts_space ON browser_space_artifacts (space_id);
