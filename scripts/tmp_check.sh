#!/usr/bin/env bash
# tmp_check.sh COMMAND...: runs COMMAND (make test's ctest), then fails,
# listing them, when it left behind in /tmp what this project's tests
# make there.  Each test removes what it made; this is the check that
# none forgot.  Exits with COMMAND's status when that failed (a failed
# test may keep its directory to be looked at: those are listed too).
#
# Only entries whose names are the tests' own are looked at, and only
# those made during the run (absent before it):
#   spaced-*                   testkit's directories (spaced-<tag>-XXXXXX),
#                              the scripts' mktemp -d (run.sh's among
#                              them), the unit fixtures'
#   test_log_*, test_egress_*  the unit tests' mkstemp files
#   org.chromium.Chromium.*    a browser's single-instance directory,
#                              which Chromium removes only on a clean exit
#   .org.chromium.Chromium.*   its shared memory files (--disable-dev-shm-usage)
#   playwright-artifacts-*, playwright_chromiumdev_profile-*
#                              the console test's Playwright and its browser
#   criterion_*.sock           a Criterion binary's socket (a killed one's)
# Another run on the same machine (a second build tree's tests) makes the
# same names.  So an entry counts only when it is ours (our uid), still
# there after a pause of SPACED_TMP_SETTLE seconds (default 10; taken only
# when some entry is there at all), unchanged over the pause (nothing in
# it written, added or removed), and no live process has it open, as a
# file, its working directory or a bound socket: the other run's entries
# in use are not ours.  A run alone on the machine, as CI's, is checked
# exactly; beside another, an idle entry of the other run's may still be
# listed.  Nothing is removed here.  SPACED_TMP_CHECK_DIR names another
# directory to check instead of /tmp (the check's own test uses one).
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: tmp_check.sh COMMAND..." >&2; exit 2; }

names='^(spaced-.*|test_log_.*|test_egress_.*|\.?org\.chromium\.Chromium\..*|playwright-artifacts-.*|playwright_chromiumdev_profile-.*|criterion_[0-9]+\.sock)$'
settle=${SPACED_TMP_SETTLE:-10}
tmp=${SPACED_TMP_CHECK_DIR:-/tmp}
tmp=${tmp%/}

# The tests' entries in $tmp now, one a line, sorted.
ours() {
  find "$tmp" -mindepth 1 -maxdepth 1 -uid "$(id -u)" -printf '%f\n' 2>/dev/null |
    grep -E "$names" | LC_ALL=C sort
}

# The $tmp entries a live process holds: an open file or its working
# directory under one, or a Unix socket bound there.
held() {
  {
    for p in /proc/[0-9]*; do
      readlink "$p/cwd" "$p"/fd/* 2>/dev/null
    done
    awk 'NR > 1 && NF >= 8 { print $8 }' /proc/net/unix 2>/dev/null
  } | awk -v d="$tmp/" 'index($0, d) == 1 {
    s = substr($0, length(d) + 1); sub(/[\/ ].*/, "", s); print s }' |
    LC_ALL=C sort -u
}

before=$(ours)
"$@"
rc=$?

new() { LC_ALL=C comm -13 <(printf '%s\n' "$before") <(ours) | sed '/^$/d'; }

# Each entry of the list $1 with a digest of its tree (names, sizes,
# times), one a line, sorted.
stamps() {
  local n
  while read -r n; do
    [ -n "$n" ] || continue
    printf '%s %s\n' "$n" "$(find "$tmp/$n" -printf '%P %s %T@ %C@\n' \
      2>/dev/null | LC_ALL=C sort | md5sum | cut -c1-32)"
  done <<<"$1" | LC_ALL=C sort
}

left=$(new)
if [ -n "$left" ]; then
  first=$(stamps "$left")
  for ((i = 0; i < settle; i++)); do
    sleep 1
    left=$(new)
    [ -n "$left" ] || break
  done
  # Unchanged since the first look, and held by no one.
  [ -z "$left" ] ||
    left=$(LC_ALL=C comm -12 <(printf '%s\n' "$first") <(stamps "$left") |
      cut -d' ' -f1 | LC_ALL=C comm -23 - <(held) | sed '/^$/d')
fi
if [ -n "$left" ]; then
  echo "tmp_check: the run left in $tmp:" >&2
  while read -r n; do echo "  $tmp/$n"; done <<<"$left" >&2
  [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
