-- The store's whole data model (PostgreSQL variant of
-- 0001_init.sqlite.sql: BIGINT times, a plpgsql append-only trigger).  Times are Unix milliseconds;
-- JSON is TEXT; booleans are 0/1.  Names of constraints and indexes are the
-- same in the PostgreSQL variant.

CREATE TABLE workspaces (
  id          TEXT PRIMARY KEY CHECK (length(id) <= 64),
  name        TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 255),
  created_at  BIGINT NOT NULL
);

CREATE TABLE principals (
  id          TEXT PRIMARY KEY CHECK (length(id) <= 64),
  kind        TEXT NOT NULL CHECK (kind IN ('operator', 'runtime_agent')),
  name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  is_admin    BIGINT NOT NULL DEFAULT 0 CHECK (is_admin IN (0, 1)),
  disabled    BIGINT NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
  created_at  BIGINT NOT NULL
);

CREATE TABLE api_tokens (
  id            TEXT PRIMARY KEY CHECK (length(id) <= 64),
  principal_id  TEXT NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  token_hash    TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),
  label         TEXT NOT NULL DEFAULT '' CHECK (length(label) <= 255),
  expires_at    BIGINT,
  revoked_at    BIGINT,
  created_at    BIGINT NOT NULL
);
CREATE INDEX api_tokens_principal ON api_tokens (principal_id);

CREATE TABLE memberships (
  workspace_id  TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  principal_id  TEXT NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  role          TEXT NOT NULL CHECK (role IN ('member', 'manager')),
  created_at    BIGINT NOT NULL,
  PRIMARY KEY (workspace_id, principal_id)
);
CREATE INDEX memberships_principal ON memberships (principal_id);

CREATE TABLE runtime_bundles (
  id          TEXT PRIMARY KEY CHECK (length(id) <= 64),
  name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  version     TEXT NOT NULL CHECK (length(version) BETWEEN 1 AND 255),
  manifest    TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  UNIQUE (name, version)
);

-- endpoint, config and profile are the instance's secret columns: only
-- actor.load reads them.
CREATE TABLE browser_instances (
  id              TEXT PRIMARY KEY CHECK (length(id) <= 64),
  name            TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 255),
  driver          TEXT NOT NULL CHECK (driver IN ('managed', 'cdp', 'fake')),
  endpoint        TEXT NOT NULL DEFAULT '',
  config          TEXT NOT NULL DEFAULT '{}',
  profile         TEXT NOT NULL DEFAULT '',
  profile_mode    TEXT NOT NULL CHECK (profile_mode IN ('ephemeral', 'persistent')),
  bundle_id       TEXT NOT NULL REFERENCES runtime_bundles (id),
  network_policy  TEXT NOT NULL DEFAULT '{}',
  status          TEXT NOT NULL CHECK (status IN ('ready', 'unavailable', 'disabled')),
  host            TEXT NOT NULL CHECK (length(host) <= 253),
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL
);
CREATE INDEX browser_instances_host ON browser_instances (host);

CREATE TABLE browser_bindings (
  id                   TEXT PRIMARY KEY CHECK (length(id) <= 64),
  workspace_id         TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  browser_instance_id  TEXT NOT NULL REFERENCES browser_instances (id) ON DELETE CASCADE,
  created_at           BIGINT NOT NULL,
  UNIQUE (workspace_id, browser_instance_id)
);
CREATE INDEX browser_bindings_instance ON browser_bindings (browser_instance_id);

CREATE TABLE browser_spaces (
  id                    TEXT PRIMARY KEY CHECK (length(id) <= 64),
  workspace_id          TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  browser_instance_id   TEXT NOT NULL REFERENCES browser_instances (id),
  binding_id            TEXT REFERENCES browser_bindings (id) ON DELETE SET NULL,
  owner_type            TEXT NOT NULL CHECK (owner_type IN ('operator', 'runtime_agent')),
  owner_id              TEXT NOT NULL CHECK (length(owner_id) <= 64),
  status                TEXT NOT NULL CHECK (status IN ('idle', 'running', 'closed', 'error')),
  granted_capabilities  TEXT NOT NULL DEFAULT '[]',
  revision              BIGINT NOT NULL DEFAULT 1 CHECK (revision >= 1),
  last_error_code       TEXT CHECK (length(last_error_code) <= 64),
  close_requested       BIGINT NOT NULL DEFAULT 0 CHECK (close_requested IN (0, 1)),
  -- The create's idempotency key and a digest of its content.
  request_id            TEXT CHECK (length(request_id) <= 64),
  request_digest        TEXT,
  -- The sequence of the last event appended for this Space.
  last_sequence         BIGINT NOT NULL DEFAULT 0,
  created_at            BIGINT NOT NULL,
  updated_at            BIGINT NOT NULL,
  closed_at             BIGINT
);
-- The core invariant: an instance has at most one Space that is not closed.
CREATE UNIQUE INDEX browser_spaces_active_instance
  ON browser_spaces (browser_instance_id) WHERE status <> 'closed';
CREATE UNIQUE INDEX browser_spaces_request
  ON browser_spaces (workspace_id, request_id) WHERE request_id IS NOT NULL;
CREATE INDEX browser_spaces_workspace ON browser_spaces (workspace_id, created_at);
CREATE INDEX browser_spaces_open ON browser_spaces (status) WHERE status <> 'closed';

CREATE TABLE browser_space_tasks (
  id                TEXT PRIMARY KEY CHECK (length(id) <= 64),
  space_id          TEXT NOT NULL REFERENCES browser_spaces (id) ON DELETE CASCADE,
  workspace_id      TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  request_id        TEXT NOT NULL CHECK (length(request_id) BETWEEN 1 AND 64),
  operation_id      TEXT NOT NULL UNIQUE CHECK (length(operation_id) <= 64),
  capability        TEXT NOT NULL CHECK (length(capability) BETWEEN 1 AND 255),
  args              TEXT NOT NULL DEFAULT '{}',
  timeout_ms        BIGINT NOT NULL CHECK (timeout_ms BETWEEN 1000 AND 600000),
  status            TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
  cancel_requested  BIGINT NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
  result            TEXT CHECK (length(result) <= 65536),
  error_code        TEXT CHECK (length(error_code) <= 64),
  error_message     TEXT CHECK (length(error_message) <= 1024),
  lease_holder      TEXT,
  lease_expires_at  BIGINT,
  created_at        BIGINT NOT NULL,
  started_at        BIGINT,
  finished_at       BIGINT,
  updated_at        BIGINT NOT NULL,
  UNIQUE (space_id, request_id)
);
-- The second invariant: at most one queued or running task per Space.
CREATE UNIQUE INDEX browser_space_tasks_active
  ON browser_space_tasks (space_id) WHERE status IN ('queued', 'running');
CREATE INDEX browser_space_tasks_space ON browser_space_tasks (space_id, created_at);
CREATE INDEX browser_space_tasks_lease
  ON browser_space_tasks (lease_expires_at) WHERE status = 'running';

-- id is the row's place in the global log: the order of (space_id,
-- sequence) is what clients read.
CREATE TABLE browser_space_events (
  id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  space_id    TEXT NOT NULL REFERENCES browser_spaces (id) ON DELETE CASCADE,
  task_id     TEXT REFERENCES browser_space_tasks (id) ON DELETE CASCADE,
  sequence    BIGINT NOT NULL CHECK (sequence >= 1),
  kind        TEXT NOT NULL CHECK (kind IN ('queued', 'started', 'completed', 'failed',
                'cancel_requested', 'cancelled', 'space_opened', 'space_closed', 'space_error')),
  payload     TEXT NOT NULL DEFAULT '{}' CHECK (length(payload) <= 65536),
  created_at  BIGINT NOT NULL,
  UNIQUE (space_id, sequence)
);

-- Events are append-only: no code path may change one.
CREATE FUNCTION browser_space_events_append_only() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'browser_space_events is append-only';
END;
$$;
CREATE TRIGGER browser_space_events_no_update
  BEFORE UPDATE ON browser_space_events
  FOR EACH ROW EXECUTE FUNCTION browser_space_events_append_only();

-- Replies to writes, by op_id, so a re-sent request is answered, not
-- applied again, even by a store started since.  Pruned after ten minutes.
CREATE TABLE store_ops (
  op_id       TEXT PRIMARY KEY,
  reply       BYTEA NOT NULL, -- the encoded reply
  created_at  BIGINT NOT NULL
);
CREATE INDEX store_ops_created ON store_ops (created_at);
