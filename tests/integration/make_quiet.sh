#!/usr/bin/env bash
# make_quiet.sh SOURCE_DIR: `make build` prints no make or CMake chatter,
# and a build that fails still shows the compiler's error (a new user's
# first five minutes).  In a fresh clone with a build tree of its own, one
# header made not to compile, so that the build fails at its first files:
# its output must hold the compiler's error and none of make's or CMake's
# lines.  Then a CMakeLists.txt changes, as after a pull, and the next build
# re-runs CMake: that run is as quiet.
set -euo pipefail
src=$1
tmp=$(mktemp -d /tmp/spaced-quiet-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "make_quiet: $*" >&2; exit 1; }

git clone -q "$src" "$tmp/repo"
cd "$tmp/repo"
# The console test's npm packages, installed from this very lock file:
# setup.sh's npm_ci.sh then has nothing to do (no registry needed).
if [ -d "$src/tests/console/node_modules" ]; then
  ln -s "$src/tests/console/node_modules" tests/console/node_modules
fi
marker="make_quiet: a deliberate compile error"
echo "#error \"$marker\"" >>common/limits.h

# Not the jobserver or the variables of a make that runs this test.
build() {
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u CMAKE_FLAGS \
    make build BUILD="$tmp/build" JOBS=2 >"$tmp/out" 2>&1
}
check() {
  local what=$1 out
  out=$(cat "$tmp/out")
  grep -qF -- "$marker" <<<"$out" || fail "$what: no compiler error:
$out"
  for chatter in 'Entering directory' 'Leaving directory' 'Built target' \
    '-- Configuring' '-- Generating' '-- Build files' 'Scanning dependencies' \
    'Re-run cmake' '% Building'; do
    ! grep -qF -- "$chatter" <<<"$out" || fail "$what: printed '$chatter':
$out"
  done
}

build && fail "the build of a broken header succeeded"
check "a first build"
# A CMakeLists.txt changed since the tree was generated, as by a pull.
echo "# changed by make_quiet.sh" >>CMakeLists.txt
build && fail "the second build of a broken header succeeded"
check "a build that re-runs CMake"
echo "make_quiet: failed builds show the compiler's error and nothing else"
