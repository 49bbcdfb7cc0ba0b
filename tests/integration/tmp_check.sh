#!/usr/bin/env bash
# tmp_check.sh SOURCE_DIR: scripts/tmp_check.sh, the check make test runs
# around ctest, on a directory of its own standing for /tmp (so that
# other tests running meanwhile are not in it).  A command that leaves
# one of the tests' entries fails, naming it, with its own status when
# it failed itself; a clean one passes; an entry there before the run, one
# of another name, and one a live process still holds are not counted.
# The commands checked are single-quoted: T expands in their own shell.
# shellcheck disable=SC2016
set -euo pipefail
src=$1
dir=$(mktemp -d /tmp/spaced-tmpcheck-XXXXXX)
cleanup() {
  # The holder of the last case, whether or not that case passed.
  [ ! -s "$dir/holder" ] || kill "$(cat "$dir/holder")" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "tmp_check: $*" >&2; exit 1; }
mkdir "$dir/tmp"

# check WANT_STATUS COMMAND: runs the check around COMMAND (in bash, with
# T the directory); its stderr goes to $dir/err.
check() {
  local want=$1 rc=0
  SPACED_TMP_CHECK_DIR=$dir/tmp SPACED_TMP_SETTLE=1 T=$dir/tmp \
    "$src/scripts/tmp_check.sh" bash -c "$2" 2>"$dir/err" || rc=$?
  [ "$rc" -eq "$want" ] || fail "'$2' exited $rc, not $want: $(cat "$dir/err")"
}

check 0 'true'
[ ! -s "$dir/err" ] || fail "a clean run printed: $(cat "$dir/err")"

check 1 'mkdir "$T/spaced-left-1"; touch "$T/org.chromium.Chromium.aBc123"'
grep -qF "$dir/tmp/spaced-left-1" "$dir/err" || fail "not named: $(cat "$dir/err")"
grep -qF "$dir/tmp/org.chromium.Chromium.aBc123" "$dir/err" ||
  fail "not named: $(cat "$dir/err")"

# The same entries again, there before this run: not this run's.
check 0 'true'
rm -rf "${dir:?}/tmp/"*

check 3 'mkdir "$T/spaced-left-2"; exit 3'
grep -qF "$dir/tmp/spaced-left-2" "$dir/err" || fail "not named: $(cat "$dir/err")"
rm -rf "${dir:?}/tmp/"*

check 0 'mkdir "$T/not-ours"'
rm -rf "${dir:?}/tmp/"*

# Another run's entry, still in use: a process works in it.
check 0 'mkdir "$T/spaced-busy"; cd "$T/spaced-busy" && { sleep 60 >/dev/null 2>&1 & echo $! >"$T/../holder"; }'
echo "tmp_check: a left entry fails the run; clean and held ones do not"
