#!/usr/bin/env bash
# check.sh SOURCE_DIR: validates api/openapi.json with the OpenAPI validator
# pinned in tests/openapi/package-lock.json (validate.mjs says what is
# checked).  npm ci runs only when node_modules was not installed from this
# very lock file; it needs the npm registry once per machine.
set -euo pipefail
src=${1:?source dir}
dir="$src/tests/openapi"

for tool in node npm sha256sum flock; do
  command -v "$tool" >/dev/null || { echo "openapi: $tool not found" >&2; exit 1; }
done

# One install at a time: two build trees may run this test together.
exec 9>/tmp/spaced-openapi-npm.lock
flock 9
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
stamp="$dir/node_modules/.spaced-lock-sha256"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
fi
flock -u 9

node "$dir/validate.mjs" "$src/api/openapi.json"
