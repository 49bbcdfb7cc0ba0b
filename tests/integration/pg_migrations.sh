#!/usr/bin/env bash
# The PostgreSQL migrations apply, in order, to a real server that this test
# starts (and stops, by pid) in its own directory, and they produce the same
# tables, indexes and invariants as SQLite's.
set -euo pipefail
src=${1:?source dir}

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$pgbin/initdb" ] || { echo "pg_migrations: PostgreSQL server binaries not found" >&2; exit 1; }

dir=$(mktemp -d /tmp/spaced-pg-XXXXXX)
as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  chown postgres "$dir"
  as_pg=(runuser -u postgres --)
fi
# As root, the checkout may sit in a directory postgres cannot enter (a
# clone under a 0700 mktemp -d): postgres's tools run from $dir, and every
# SQL file reaches psql on its stdin, opened by this shell.
cd "$dir"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  for _ in $(seq 1 100); do [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && sleep 0.05 || break; done
  rm -rf "$dir"
}
trap cleanup EXIT

"${as_pg[@]}" "$pgbin/initdb" -D "$dir/data" -A trust -U spaced >/dev/null
"${as_pg[@]}" "$pgbin/postgres" -D "$dir/data" -k "$dir" -c listen_addresses= \
  -p 5432 >"$dir/log" 2>&1 &
pid=$!
ready=""
for _ in $(seq 1 200); do
  if "${as_pg[@]}" "$pgbin/pg_isready" -h "$dir" -p 5432 -q; then ready=1; break; fi
  sleep 0.05
done
[ -n "$ready" ] || { cat "$dir/log" >&2; exit 1; }

psql=("${as_pg[@]}" psql -h "$dir" -p 5432 -U spaced -d postgres -v ON_ERROR_STOP=1 -q -At)
"${psql[@]}" -c "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"
expect=1
for f in $(ls "$src"/store/migrations/*.sql | sort); do
  base=$(basename "$f")
  case "$base" in *.sqlite.sql) continue ;; esac
  version=$((10#${base%%_*}))
  [ "$version" -eq "$expect" ] || { echo "pg_migrations: $base breaks the line (want $expect)" >&2; exit 1; }
  name=${base#*_}; name=${name%%.*}
  { cat "$f"; printf '\nINSERT INTO schema_migrations VALUES (%d, '"'%s'"', 0);\n' "$version" "$name"; } |
    "${psql[@]}" -1 -f -
  expect=$((expect + 1))
done
head=$("${psql[@]}" -c "SELECT max(version) FROM schema_migrations")
[ "$head" -ge 1 ]

# The invariants hold on PostgreSQL too.
"${psql[@]}" <<'SQL'
INSERT INTO workspaces VALUES ('w', 'w', 0);
INSERT INTO runtime_bundles VALUES ('b', 'fake', '1', '{}', 0);
INSERT INTO browser_instances (id, name, driver, profile_mode, bundle_id, status, host, created_at, updated_at)
  VALUES ('i', 'i', 'fake', 'ephemeral', 'b', 'ready', 'h', 0, 0);
INSERT INTO browser_spaces (id, workspace_id, browser_instance_id, owner_type, owner_id, status, created_at, updated_at)
  VALUES ('s1', 'w', 'i', 'operator', 'o', 'idle', 0, 0);
INSERT INTO browser_space_tasks (id, space_id, workspace_id, request_id, operation_id, capability, timeout_ms, status, created_at, updated_at)
  VALUES ('t1', 's1', 'w', 'r1', 'o1', 'noop', 1000, 'queued', 0, 0);
INSERT INTO browser_space_events (space_id, task_id, sequence, kind, created_at) VALUES ('s1', 't1', 1, 'queued', 0);
SQL
fails=0
must_fail() {
  if "${psql[@]}" -c "$1" >/dev/null 2>&1; then echo "pg_migrations: accepted: $1" >&2; fails=$((fails + 1)); fi
}
must_fail "INSERT INTO browser_spaces (id, workspace_id, browser_instance_id, owner_type, owner_id, status, created_at, updated_at) VALUES ('s2', 'w', 'i', 'operator', 'o', 'idle', 0, 0)"
must_fail "INSERT INTO browser_space_tasks (id, space_id, workspace_id, request_id, operation_id, capability, timeout_ms, status, created_at, updated_at) VALUES ('t2', 's1', 'w', 'r2', 'o2', 'noop', 1000, 'running', 0, 0)"
must_fail "UPDATE browser_space_events SET kind = 'failed'"
must_fail "INSERT INTO browser_spaces (id, workspace_id, browser_instance_id, owner_type, owner_id, status, created_at, updated_at) VALUES ('s3', 'w', 'i', 'robot', 'o', 'closed', 0, 0)"
# Closing the first Space frees the instance.
"${psql[@]}" -c "UPDATE browser_spaces SET status = 'closed' WHERE id = 's1'"
"${psql[@]}" -c "INSERT INTO browser_spaces (id, workspace_id, browser_instance_id, owner_type, owner_id, status, created_at, updated_at) VALUES ('s4', 'w', 'i', 'operator', 'o', 'idle', 0, 0)"
# An artifact (0003): images only, its size its own, gone with its Space.
"${psql[@]}" -c "INSERT INTO browser_space_artifacts VALUES ('a1', 't1', 's1', 'screenshot.png', 'image/png', '\\x89504e47'::bytea, repeat('0', 64), 4, 0)"
must_fail "INSERT INTO browser_space_artifacts VALUES ('a2', 't1', 's1', 'x.html', 'text/html', '\\x00'::bytea, repeat('0', 64), 1, 0)"
must_fail "INSERT INTO browser_space_artifacts VALUES ('a3', 't1', 's1', 'x.png', 'image/png', '\\x00'::bytea, repeat('0', 64), 2, 0)"
must_fail "INSERT INTO browser_space_artifacts VALUES ('a4', 't1', 's1', 'screenshot.png', 'image/png', '\\x00'::bytea, repeat('0', 64), 1, 0)"
"${psql[@]}" -c "DELETE FROM browser_spaces WHERE id = 's1'"
left=$("${psql[@]}" -c "SELECT count(*) FROM browser_space_artifacts")
[ "$left" -eq 0 ] || { echo "pg_migrations: $left artifacts outlived their Space" >&2; fails=$((fails + 1)); }
[ "$fails" -eq 0 ]
echo "pg_migrations: head $head applied; invariants hold: 1 passed, 0 failed"
