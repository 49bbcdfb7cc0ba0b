#!/usr/bin/env bash
# run.sh BUILD [spaced flags...]: starts spaced from the build tree, waits
# for its readiness line, says in plain words how to use it, then waits on
# it.  Ctrl-C or SIGTERM stops it (forwarded as SIGTERM, once).  Flags and
# SPACED_* variables are spaced's own (docs/operations.md, the configuration reference), e.g.
# --http-listen=127.0.0.1:18080 --data-dir=/tmp/x for a second instance.
set -euo pipefail
build=${1:-build}
shift || true
cd "$(dirname "$0")/.."
# Seconds a start may take before run.sh gives up on it (not SPACED_*:
# spaced refuses unknown SPACED_ variables): a first start
# creates the database and registers its browsers.
ready_timeout=${RUN_READY_TIMEOUT:-120}
# Then /readyz is polled every 0.2 s, this many times at most (10 s).
api_polls=50

# The values this start will use, from spaced itself, so that the
# precedence of flags, environment and file is decided in one place.
conf=$("$build/spaced" "$@" --print-config)
value() { sed -n "s/^$1 = //p" <<<"$conf"; }
listen=$(value http_listen)
data_dir=$(value data_dir)
mkdir -p "$data_dir"
token="$(cd "$data_dir" && pwd)/admin.token"
url="http://$listen"

tmp=$(mktemp -d -t spaced-run-XXXXXX)
spaced_pid=
cleanup() {
  rm -rf "$tmp"
}
stop() {
  trap '' INT TERM
  if [ -n "$spaced_pid" ]; then
    echo "spaced: stopping" >&2
    kill -TERM "$spaced_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap stop INT TERM

mkfifo "$tmp/ready"
# SIGINT from the terminal reaches run.sh, which forwards it as SIGTERM.
"$build/spaced" "$@" --notify-fd=3 3>"$tmp/ready" &
spaced_pid=$!
exec 4<"$tmp/ready"
line=
if ! read -r -t "$ready_timeout" line <&4 || [ "$line" != ready ]; then
  exec 4<&-
  if kill -0 "$spaced_pid" 2>/dev/null; then
    echo "spaced: not ready after ${ready_timeout}s; stopping it" >&2
    kill -TERM "$spaced_pid" 2>/dev/null || true
  fi
  rc=0
  wait "$spaced_pid" || rc=$?
  echo "spaced: did not start (exit $rc); its log above says why" >&2
  exit $((rc == 0 ? 1 : rc))
fi
exec 4<&-

# The readiness line says the store answers; the API may still be binding
# its port (or fail to): what the block below promises is checked first.
for ((i = 0; i < api_polls; i++)); do
  curl -fsS -o /dev/null "$url/readyz" 2>/dev/null && break
  kill -0 "$spaced_pid" 2>/dev/null || break
  sleep 0.2
done
if ! curl -fsS -o /dev/null "$url/readyz" 2>/dev/null; then
  echo "spaced: nothing answers at $url/readyz; its log above says why" >&2
  stop
  wait "$spaced_pid" || true
  exit 1
fi

# The default workspace's id, for the curl example (routes take ids).
ws=$(curl -fsS -H "Authorization: Bearer $(cat "$token")" \
  "$url/api/v1/admin/workspaces" 2>/dev/null |
  jq -r '.data[]? | select(.name == "default") | .workspace_id' 2>/dev/null |
  head -n 1 || true)

{
  echo
  echo "spaced is running."
  echo "  Console:      $url/"
  echo "  Admin token:  $token  (keep it secret)"
  echo "  Stop:         press Ctrl-C"
  echo
  echo "Try it:"
  if [ -n "$ws" ]; then
    echo "  curl -sS -H \"Authorization: Bearer \$(cat $token)\" $url/api/v1/workspaces/$ws/browser-spaces"
  fi
  if [ -x "$build/spacectl" ]; then
    # spacectl finds the token in ./var on its own; another data dir
    # is named for it.
    ctl_env=
    if [ "$(dirname "$token")" != "$PWD/var" ]; then
      ctl_env="SPACED_DATA_DIR=$(dirname "$token") "
    fi
    echo "  $ctl_env$build/spacectl --url $url spaces list --workspace default"
  fi
  echo
}

rc=0
while true; do
  wait "$spaced_pid" && rc=0 || rc=$?
  # A trapped signal interrupts wait (status > 128) with spaced still up.
  kill -0 "$spaced_pid" 2>/dev/null || break
done
exit "$rc"
