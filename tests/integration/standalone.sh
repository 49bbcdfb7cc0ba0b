#!/usr/bin/env bash
# standalone.sh SOURCE_DIR: the repository stands alone.  No file of it
# (code, comment, doc, test, build file) may cite what a reader of the
# repository cannot open: the team's contract documents kept outside it
# (by name, by section or rule number), a directory beside the checkout,
# or an issue or ticket by number.  A rule belongs in the comment itself,
# in the project's own words, or in a page of docs/.  A reference to a
# public upstream tracker names it ("#1518 on nng's issue tracker", or
# "nng issue #1518") and is allowed.
#
# Files scanned: in a git checkout, every tracked file and every untracked
# one git does not ignore (so a new file is caught before its commit);
# elsewhere, every file of the tree but the build trees, var/, out/, tmp/
# and node_modules/.  Binary files are skipped.  Every hit is printed as
# file:line:text and the test fails.
#
# The patterns are spelt with a bracket in each word, so that this file
# does not match itself.
set -euo pipefail
src=${1:?source dir}
cd "$src"

# The documents by name (a macro or a function of that name is not a
# citation), a directory beside the checkout, and issue numbers.
re='\b(SPE[C]|DESIG[N])\b(?!\()'
re+='|\.\./share[d]\b'
re+='|(?<!nng )(?<!nng.s )\b(?i:iss[u]es?|ticke[t]s?) #?\d'

list=$(mktemp)
trap 'rm -f "$list" "$list.err"' EXIT
# A checkout of its own: git lists its files.  (A tree unpacked inside
# another repository's work tree is walked with find.)
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
  git ls-files -z --cached --others --exclude-standard
else
  find . \( -path ./.git -o -path ./build -o -path './build-*' \
    -o -path ./var -o -path ./out -o -path ./tmp -o -path ./.cache \
    -o -name node_modules \) -prune -o -type f -print0
fi | while IFS= read -r -d '' f; do
  # A tracked file deleted in the work tree is not there to read.
  if [ -f "$f" ]; then printf '%s\0' "$f"; fi
done >"$list"

[ -s "$list" ] || { echo "standalone: no files found under $src" >&2; exit 1; }
n=$(tr -cd '\0' <"$list" | wc -c)

# xargs says 123 both for a batch without a hit (grep's 1) and for one
# grep could not read (its 2): hits are judged by the output, a read error
# by grep's message on stderr, a grep that could not run by 124 or more.
set +e
hits=$(xargs -0 grep -nHIP -e "$re" -- <"$list" 2>"$list.err")
rc=$?
set -e
if [ -s "$list.err" ] || [ "$rc" -ge 124 ]; then
  cat "$list.err" >&2
  echo "standalone: grep failed (status $rc)" >&2
  exit 1
fi

if [ -n "$hits" ]; then
  printf '%s\n' "$hits"
  echo "standalone: $(printf '%s\n' "$hits" | wc -l) line(s) cite what the" \
    "repository does not hold; say the rule itself, or point into docs/" >&2
  exit 1
fi
echo "standalone: $n files, no citation of anything outside the repository"
