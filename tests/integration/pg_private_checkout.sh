#!/usr/bin/env bash
# pg_migrations.sh from a checkout that the postgres user cannot read, as
# when root runs `make test` in a fresh clone under a 0700 `mktemp -d` (a
# test that runs a tool as another user must not need that user to read the
# checkout; docs/development.md): the migrations and the script are copied
# under such a directory and run from inside it.  Only root runs
# PostgreSQL's tools as another user, so only root can meet the problem;
# anyone else has nothing to check.
set -euo pipefail
src=${1:?source dir}
if [ "$(id -u)" -ne 0 ]; then
  echo "pg_private_checkout: not root: postgres would run as this user, nothing to check"
  exit 0
fi
priv=$(mktemp -d /tmp/spaced-priv-XXXXXX)
trap 'rm -rf "$priv"' EXIT
chmod 700 "$priv"
mkdir -p "$priv/r/store" "$priv/r/tests/integration" "$priv/r/build"
cp -r "$src/store/migrations" "$priv/r/store/"
cp "$src/tests/integration/pg_migrations.sh" "$priv/r/tests/integration/"
cd "$priv/r/build"
"$priv/r/tests/integration/pg_migrations.sh" "$priv/r"
