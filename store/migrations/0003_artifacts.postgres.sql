-- A task's artifacts (PostgreSQL variant of 0003_artifacts.sqlite.sql:
-- BYTEA bytes, BIGINT size and time).  Written by actor.finish in the
-- transaction that finishes the task, at most one of each name per task,
-- at most CM_ARTIFACT_MAX (4 MiB); sha256 and size are the store's own.
-- Deleting the task or its Space deletes them.
CREATE TABLE browser_space_artifacts (
  id          TEXT PRIMARY KEY CHECK (length(id) <= 64),
  task_id     TEXT NOT NULL REFERENCES browser_space_tasks (id) ON DELETE CASCADE,
  space_id    TEXT NOT NULL REFERENCES browser_spaces (id) ON DELETE CASCADE,
  name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
  mime        TEXT NOT NULL CHECK (mime IN ('image/png', 'image/jpeg')),
  bytes       BYTEA NOT NULL CHECK (octet_length(bytes) BETWEEN 1 AND 4194304),
  sha256      TEXT NOT NULL CHECK (length(sha256) = 64),
  size        BIGINT NOT NULL CHECK (size = octet_length(bytes)),
  created_at  BIGINT NOT NULL,
  UNIQUE (task_id, name)
);
CREATE INDEX browser_space_artifacts_space ON browser_space_artifacts (space_id);
