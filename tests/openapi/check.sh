#!/usr/bin/env bash
# check.sh SOURCE_DIR: validates api/openapi.json with the OpenAPI validator
# pinned in tests/openapi/package-lock.json (validate.mjs says what is
# checked).  scripts/npm_ci.sh installs it when it is not installed from
# this very lock file.
set -euo pipefail
src=${1:?source dir}
dir="$src/tests/openapi"

"$src/scripts/npm_ci.sh" "$dir"
node "$dir/validate.mjs" "$src/api/openapi.json"
