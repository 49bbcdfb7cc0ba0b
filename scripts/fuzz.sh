#!/usr/bin/env bash
# Runs every fuzz target in a build tree for N seconds each, from a corpus
# kept outside the repository.  Fails on the first crash.
set -euo pipefail
build=${1:-build-fuzz}
seconds=${2:-30}
corpus_root=${FUZZ_CORPUS:-/tmp/spaced-fuzz-corpus}
shopt -s nullglob
targets=("$build"/fuzz_*)
if [ "${#targets[@]}" -eq 0 ]; then
  echo "fuzz: no targets in $build" >&2
  exit 1
fi
for t in "${targets[@]}"; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  mkdir -p "$corpus_root/$name"
  echo "fuzz: $name for ${seconds}s" >&2
  "$t" -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$corpus_root/$name-" "$corpus_root/$name" 2>&1 | tail -n 12
done
