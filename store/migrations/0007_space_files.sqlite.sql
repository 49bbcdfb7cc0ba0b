-- A task's artifact may be a file the page downloaded: its mime type is
-- one of the service's table (common/mime.h, which the store checks too),
-- no longer only an image's.  A column's CHECK cannot be changed in
-- place here, so the table is made again with its rows.  And a Space's
-- files: what a client put on the Space (PUT .../files/{name}) for its
-- page to upload, at most CM_UPLOAD_MAX (4 MiB) each under a name of at
-- most CM_FILE_NAME_MAX (128) bytes, one of each name (a second put
-- replaces it), with the type the client gave; sha256 and size are the
-- store's own.  Deleting the Space deletes them.
CREATE TABLE browser_space_artifacts_new (
  id          TEXT PRIMARY KEY CHECK (length(id) <= 64),
  task_id     TEXT NOT NULL REFERENCES browser_space_tasks (id) ON DELETE CASCADE,
  space_id    TEXT NOT NULL REFERENCES browser_spaces (id) ON DELETE CASCADE,
  name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
  mime        TEXT NOT NULL CHECK (mime IN ('image/png', 'image/jpeg', 'image/gif', 'image/webp', 'text/plain',
    'text/csv', 'application/json', 'application/pdf', 'application/zip',
    'application/gzip', 'application/xml', 'application/octet-stream')),
  bytes       BLOB NOT NULL CHECK (length(bytes) BETWEEN 1 AND 4194304),
  sha256      TEXT NOT NULL CHECK (length(sha256) = 64),
  size        INTEGER NOT NULL CHECK (size = length(bytes)),
  created_at  INTEGER NOT NULL,
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
  bytes       BLOB NOT NULL CHECK (length(bytes) BETWEEN 1 AND 4194304),
  sha256      TEXT NOT NULL CHECK (length(sha256) = 64),
  size        INTEGER NOT NULL CHECK (size = length(bytes)),
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (space_id, name)
);
