-- PostgreSQL variant of 0007_space_files.sqlite.sql (BYTEA bytes, BIGINT
-- size and times): the artifacts table is made again the same way, so
-- both dialects hold the same objects, and a Space's files are added.
CREATE TABLE browser_space_artifacts_new (
  id          TEXT PRIMARY KEY CHECK (length(id) <= 64),
  task_id     TEXT NOT NULL REFERENCES browser_space_tasks (id) ON DELETE CASCADE,
  space_id    TEXT NOT NULL REFERENCES browser_spaces (id) ON DELETE CASCADE,
  name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
  mime        TEXT NOT NULL CHECK (mime IN ('image/png', 'image/jpeg', 'image/gif', 'image/webp', 'text/plain',
    'text/csv', 'application/json', 'application/pdf', 'application/zip',
    'application/gzip', 'application/xml', 'application/octet-stream')),
  bytes       BYTEA NOT NULL CHECK (octet_length(bytes) BETWEEN 1 AND 4194304),
  sha256      TEXT NOT NULL CHECK (length(sha256) = 64),
  size        BIGINT NOT NULL CHECK (size = octet_length(bytes)),
  created_at  BIGINT NOT NULL,
  UNIQUE (task_id, name)
);
INSERT INTO browser_space_artifacts_new SELECT id, task_id, space_id, name,
  mime, bytes, sha256, size, created_at FROM browser_space_artifacts;
DROP TABLE browser_space_artifacts;
ALTER TABLE browser_space_artifacts_new RENAME TO browser_space_artifacts;
CREATE INDEX browser_space_artifacts_space ON browser_space_artifacts (space_id);
CREATE TABLE browser_space_files (
  space_id    TEXT NOT NULL REFERENCES browser_spaces (id) ON DELETE CASCADE,
  name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
  mime        TEXT NOT NULL CHECK (length(mime) BETWEEN 3 AND 64),
  bytes       BYTEA NOT NULL CHECK (octet_length(bytes) BETWEEN 1 AND 4194304),
  sha256      TEXT NOT NULL CHECK (length(sha256) = 64),
  size        BIGINT NOT NULL CHECK (size = octet_length(bytes)),
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL,
  PRIMARY KEY (space_id, name)
);
