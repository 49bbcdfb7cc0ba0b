#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the store's tests on PostgreSQL.
#
#   cluster.sh start STATE   initdb and start a server in a fresh 0700
#                            directory under /tmp, listening on a unix
#                            socket there only; write to STATE the libpq
#                            DSN the tests connect with.
#   cluster.sh stop STATE    stop that server (by the pid it recorded) and
#                            remove its directory and STATE.
#
# As root, the server runs as user postgres (it refuses root), in a
# directory only postgres may enter, which root reaches anyway.  No TCP
# port is opened: the socket's directory is the cluster's own, so two
# clusters never collide.  fsync is off: the cluster lives for one test
# run, and a crash of the machine loses nothing that matters.
# CLUSTER_FSYNC=on keeps it on (make bench-pg: figures beside SQLite's
# synchronous=FULL are of the same durability).
set -euo pipefail
cmd=${1:?start or stop}
state=${2:?state file}

stop() {
  [ -f "$state" ] || return 0
  dir=$(sed -n 's/^# dir //p' "$state")
  case "$dir" in /tmp/spaced-pgut-*) ;; *) echo "cluster: bad state $state" >&2; return 1 ;; esac
  if [ -f "$dir/data/postmaster.pid" ]; then
    pid=$(head -n 1 "$dir/data/postmaster.pid")
    kill -INT "$pid" 2>/dev/null || true # fast shutdown
    for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir" "$state"
}

case "$cmd" in
stop) stop; exit 0 ;;
start) ;;
*) echo "cluster: start or stop" >&2; exit 2 ;;
esac

stop # a cluster a killed run left behind
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$pgbin/initdb" ] || { echo "cluster: PostgreSQL server binaries not found" >&2; exit 1; }
dir=$(mktemp -d /tmp/spaced-pgut-XXXXXX)
chmod 700 "$dir"
as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  chown postgres "$dir"
  as_pg=(runuser -u postgres --)
fi
mkdir -p "$(dirname "$state")"
printf '# dir %s\n' "$dir" >"$state"
# postgres's tools run from $dir, which they can enter.
cd "$dir"
if ! "${as_pg[@]}" "$pgbin/initdb" -D "$dir/data" -A trust -U spaced >"$dir/initdb.log" 2>&1; then
  cat "$dir/initdb.log" >&2
  stop
  exit 1
fi
# pg_ctl detaches the server from this script's output: ctest waits for
# the script, not for the server.
if ! "${as_pg[@]}" "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
  -o "-k $dir -c listen_addresses= -p 5432 -c fsync=${CLUSTER_FSYNC:-off} -c max_connections=200" \
  start >/dev/null; then
  cat "$dir/log" >&2
  stop
  exit 1
fi
printf 'host=%s port=5432 user=spaced dbname=postgres\n' "$dir" >>"$state"
echo "cluster: PostgreSQL on $dir"
