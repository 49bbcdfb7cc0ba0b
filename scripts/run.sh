#!/usr/bin/env bash
# Starts spaced from the build tree on its embedded defaults (see README).
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."

if [ -x "$build/spaced" ]; then
  exec "$build/spaced" "${@:2}"
fi
# The supervisor is not part of this build yet: run the store alone.
echo "spaced: starting the store (data in ./var, socket ipc://./var/run/store.ipc)" >&2
exec "$build/spaced-store" --log-format=text "${@:2}"
