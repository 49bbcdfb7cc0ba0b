#!/usr/bin/env bash
# Installs every Debian package spaced needs to build, run and test, and
# the npm packages of the browser tests (tests/console: playwright-core;
# tests/mcp: the MCP TypeScript SDK; each pinned by its package-lock.json).
# Idempotent: when nothing is missing it only checks and returns.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

packages=(
  build-essential cmake pkg-config clang-format
  libnng-dev libsqlite3-dev libmsgpack-dev libcurl4-openssl-dev
  libcriterion-dev libjansson-dev libwslay-dev libssl-dev libpq-dev
  libsystemd-dev libc-ares-dev
  chromium postgresql
  nng-utils wrk clang libclang-rt-14-dev curl jq
)

# Node and npm from Debian only when there are none: a node installed
# otherwise (nodesource ships npm with it) is left alone.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)

# The npm packages, once node and npm are there: npm_ci.sh is a no-op
# when node_modules was installed from this very lock file.  Without the
# registry the build goes on; the console test says what it misses.
npm_deps() {
  "$here/npm_ci.sh" "$here/../tests/console" ||
    echo "setup: npm ci for tests/console failed (the console test needs it)" >&2
  "$here/npm_ci.sh" "$here/../tests/mcp" ||
    echo "setup: npm ci for tests/mcp failed (the MCP SDK test needs it)" >&2
}

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  npm_deps
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
npm_deps
