#!/usr/bin/env bash
# npm_ci.sh DIR: installs DIR's node_modules from DIR/package-lock.json
# with `npm ci`, only when they were not installed from this very lock
# file (a stamp in node_modules holds its SHA-256).  Needs the npm
# registry once per machine and lock file; idempotent otherwise.
set -euo pipefail
dir=${1:?directory holding package-lock.json}

for tool in node npm sha256sum flock; do
  command -v "$tool" >/dev/null || { echo "npm_ci: $tool not found (scripts/setup.sh installs it)" >&2; exit 1; }
done

# One install at a time per directory: two build trees may run a test
# that needs it together.  The lock is on the directory itself, which
# outlives every install, so no lock file is left anywhere.
exec 9<"$dir"
flock 9
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
stamp="$dir/node_modules/.spaced-lock-sha256"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >/dev/null
  echo "$want" >"$stamp"
fi
flock -u 9
