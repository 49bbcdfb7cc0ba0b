#!/usr/bin/env bash
# Runs every fuzz target in a build tree for N seconds each, starting from
# the committed seed corpus (tests/fuzz/corpus/<target>), which is copied
# into a scratch corpus outside the repository first, so a run never
# writes into the checkout.  Prints each target's executions; fails on the
# first crash, leak, sanitizer report, hang or property violation, with
# the input that found it kept beside the scratch corpus.
set -euo pipefail
build=${1:-build-fuzz}
seconds=${2:-30}
root=$(cd "$(dirname "$0")/.." && pwd)
seeds=$root/tests/fuzz/corpus
corpus_root=${FUZZ_CORPUS:-/tmp/spaced-fuzz-corpus}
# Seconds one input may take before it counts as a hang.
timeout=${FUZZ_TIMEOUT:-10}
shopt -s nullglob
targets=("$build"/fuzz_*)
if [ "${#targets[@]}" -eq 0 ]; then
  echo "fuzz: no targets in $build" >&2
  exit 1
fi
summary=()
for t in "${targets[@]}"; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  corpus=$corpus_root/$name
  log=$corpus_root/$name.log
  mkdir -p "$corpus"
  if [ -d "$seeds/$name" ]; then
    cp -n "$seeds/$name"/* "$corpus"/ 2>/dev/null || true
  fi
  echo "fuzz: $name for ${seconds}s" >&2
  rc=0
  "$t" -max_total_time="$seconds" -max_len=65536 -timeout="$timeout" \
    -print_final_stats=1 -artifact_prefix="$corpus_root/$name-" \
    "$corpus" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  if [ "$rc" -ne 0 ]; then
    tail -n 40 "$log" >&2
    echo "fuzz: $name FAILED (exit $rc); input and log in $corpus_root" >&2
    exit 1
  fi
  line=$(printf '%-18s %8s executions in %ss, corpus %s' "$name" \
    "${execs:-?}" "$seconds" "$(ls "$corpus" | wc -l)")
  echo "fuzz: $line" >&2
  summary+=("$line")
done
echo "fuzz: every target ran clean:" >&2
printf '  %s\n' "${summary[@]}" >&2
