#!/usr/bin/env bash
# spaced-store with store_backend = postgres: it starts on the cluster of
# tests/pg/cluster.sh (state file $2), applies the migrations to the
# DSN's schema, serves, and its DSN (carrying a canary) is in no log
# line, not in its argv, and not in --print-config.  Stops it by pid.
set -euo pipefail
bin=${1:?build dir}
state=${2:?cluster state file}
base=$(grep -v '^#' "$state" | tail -n 1)
dir=$(mktemp -d /tmp/spaced-pgst-XXXXXX)
schema="st_$$"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  for _ in $(seq 1 100); do [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && sleep 0.05 || break; done
  psql "$base" -qAtc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
psql "$base" -qAtc "CREATE SCHEMA $schema"
canary="canary-dsn-$$"
cat >"$dir/spaced.conf" <<CONF
store_backend = postgres
postgres_dsn = "$base options='-csearch_path=$schema' application_name=$canary"
data_dir = $dir
run_dir = $dir
CONF
"$bin/spaced-store" --config="$dir/spaced.conf" >"$dir/log" 2>&1 &
pid=$!
up=""
for _ in $(seq 1 600); do
  if grep -q '"store: serving' "$dir/log"; then up=1; break; fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
[ -n "$up" ] || { echo "store_process: spaced-store did not serve on PostgreSQL" >&2; cat "$dir/log" >&2; exit 1; }
head=$(psql "$base" -qAtc "SELECT max(version) FROM $schema.schema_migrations")
[ "$head" -ge 3 ] || { echo "store_process: migrations stop at $head" >&2; exit 1; }
# Its connections are there, under the canary's application_name: the two
# it writes on in turn, and the one it listens for other stores' events on.
n=""
for _ in $(seq 1 200); do
  n=$(psql "$base" -qAtc "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$canary'")
  [ "$n" -eq 3 ] && break
  sleep 0.05
done
[ "$n" -eq 3 ] || { echo "store_process: $n connections of the store" >&2; exit 1; }
if tr '\0' ' ' </proc/$pid/cmdline | grep -q "$canary"; then echo "store_process: the DSN is in argv" >&2; exit 1; fi
if grep -q "$canary" "$dir/log"; then echo "store_process: the DSN is in the log" >&2; exit 1; fi
if "$bin/spaced-store" --config="$dir/spaced.conf" --print-config 2>&1 | grep -q "$canary"; then
  echo "store_process: --print-config shows the DSN" >&2; exit 1
fi
echo "store_process: spaced-store serves on PostgreSQL, head $head; the DSN shows nowhere"
