#!/usr/bin/env bash
# make bench-pg: 64-Space throughput and no-op task latency (actor_bench)
# on SQLite, on PostgreSQL, and on two hosts sharing one PostgreSQL
# database, one after the other in one run, then a summary of the three.
# PostgreSQL is a throwaway cluster (tests/pg/cluster.sh) with fsync on,
# removed at the end.  Without PostgreSQL's server binaries it says so
# and does nothing.
#
#   scripts/bench_pg.sh BUILD_DIR
#   ACTOR_BENCH_SPACES, ACTOR_BENCH_SECONDS: as for actor_bench (64, 3)
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "bench-pg: skipped: PostgreSQL's server binaries are not installed (Debian package postgresql)"
  exit 0
fi
state=$build/bench-pg.state
log=$build/bench-pg.log
trap '"$src/tests/pg/cluster.sh" stop "$state"' EXIT
SPACED_PG_FSYNC=on "$src/tests/pg/cluster.sh" start "$state" >/dev/null
export ACTOR_BENCH_SPACES=${ACTOR_BENCH_SPACES:-64}
echo "bench-pg: $(uptime)"
: >"$log"
run() { # name, then environment assignments for actor_bench
  local name=$1
  shift
  echo "== $name" | tee -a "$log"
  env "$@" "$build/actor_bench" latency throughput 2>&1 | grep -v '^spaced: ' | tee -a "$log"
}
# A run that fails (actor_bench says why, and FAILED on its line) does not
# stop the others or the summary; the exit status says so at the end.
rc=0
run "sqlite, 1 host" || rc=1
run "postgres, 1 host" TK_PG_STATE="$state" || rc=1
run "postgres, 2 hosts" TK_PG_STATE="$state" ACTOR_BENCH_HOSTS=2 || rc=1
# One line a figure, from the lines above (ms truncated to the microsecond).
echo "== summary"
awk '
  /^latency: / { s = $0; sub(/.*sequential; /, "", s); sub(/\):.*/, "", s);
                 m = $0; sub(/.*\): /, "", m); print "latency    " s ": " m }
  /^throughput: / { s = $0; sub(/.*latency_ms=0, /, "", s); sub(/, each client.*/, "", s);
                    t = $0; sub(/.*tasks_per_s=/, "", t); sub(/ .*/, "", t);
                    n = $0; sub(/^throughput: spaces=/, "", n); sub(/ .*/, "", n);
                    f = ($0 ~ / FAILED /) ? " FAILED" : ""
                    print "throughput " s ": spaces=" n " tasks_per_s=" t f }
' "$log"
exit $rc
