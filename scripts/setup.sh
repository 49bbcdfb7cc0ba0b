#!/usr/bin/env bash
# Installs every Debian package spaced needs to build, run and test.
# Idempotent: when nothing is missing it only checks and returns.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang-format
  libnng-dev libsqlite3-dev libmsgpack-dev libcurl4-openssl-dev
  libcriterion-dev libjansson-dev libwslay-dev libssl-dev libpq-dev
  libsystemd-dev
  chromium postgresql
  nng-utils wrk clang libclang-rt-14-dev curl jq
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: missing packages: ${missing[*]}" >&2
  echo "setup: run as root: apt-get update && $cmd" >&2
  exit 1
fi

echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
