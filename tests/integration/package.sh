#!/usr/bin/env bash
# package.sh SOURCE_DIR BUILD_DIR: the .deb (CPack) of the build tree,
# unpacked with dpkg -x into a scratch root: every binary there answers
# --version with the libraries as installed, the installed configuration
# loads, the unit is the one README and docs/operations.md describe, and
# every Depends is a Debian package name.  Then `make install` (PREFIX,
# DESTDIR) into another scratch root: the binaries, etc/ and the unit.
set -euo pipefail
src=$1
build=$2
tmp=$(mktemp -d /tmp/spaced-deb-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "package: $*" >&2; exit 1; }

# The tree as make deb leaves it (prefix /usr), packaged into $tmp.
cmake -S "$src" -B "$build" -DCMAKE_INSTALL_PREFIX=/usr >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log" >&2; fail "configure failed"; }
(cd "$build" && cpack -G DEB -B "$tmp/out") >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log" >&2; fail "cpack failed"; }
debs=("$tmp"/out/spaced_*.deb)
[ -f "${debs[0]}" ] || fail "no .deb in $tmp/out"
deb=${debs[0]}

depends=$(dpkg-deb -f "$deb" Depends)
[ -n "$depends" ] || fail "no Depends"
IFS=',' read -ra names <<<"$depends"
for n in "${names[@]}"; do
  n=${n// /}
  n=${n%%(*}
  # Installed here, so a name that is not a Debian package shows.
  dpkg-query -W -f='${Status}\n' "$n" 2>/dev/null | grep -q 'install ok installed' ||
    fail "Depends names $n, which is not an installed Debian package"
done
# What the binaries link, and libcurl, which is loaded with dlopen.
for n in libnng1 libsqlite3-0 libmsgpackc2 libjansson4 libwslay1 libssl3 libcurl4; do
  grep -qw -- "$n" <<<"$depends" || fail "Depends lacks $n: $depends"
done

root=$tmp/root
dpkg -x "$deb" "$root"
bins=(spaced spaced-store spaced-api spaced-actor)
[ -x "$build/spacectl" ] && bins+=(spacectl)
for b in "${bins[@]}"; do
  exe=$root/usr/bin/$b
  [ -x "$exe" ] || fail "$b is not in the package"
  ! ldd "$exe" | grep -q 'not found' || fail "$b: $(ldd "$exe" | grep 'not found')"
  out=$(env -i PATH=/usr/bin:/bin "$exe" --version) || fail "$b --version failed"
  [[ $out =~ ^$b\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "$b --version said: $out"
done
conf=$root/etc/spaced/spaced.conf
[ -f "$conf" ] || fail "no /etc/spaced/spaced.conf"
[ -f "$root/etc/spaced/bundles/browser.json" ] || fail "no bundles in /etc/spaced"
env -i PATH=/usr/bin:/bin "$root/usr/bin/spaced" --config="$conf" --print-config >/dev/null ||
  fail "the installed configuration does not load"

# The unpacked service starts on the installed configuration, from a
# directory with no etc/ of its own, and loads the bundles beside it.
port=$((20000 + RANDOM % 10000))
mkfifo "$tmp/ready"
(cd "$tmp" && exec env -i PATH=/usr/bin:/bin "$root/usr/bin/spaced" \
  --config="$conf" --data-dir="$tmp/data" --http-listen=127.0.0.1:$port \
  --managed-browsers=0 --warm-standby=false --log-format=text \
  --notify-fd=3 3>"$tmp/ready" >"$tmp/spaced.log" 2>&1) &
pid=$!
stop() { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
read -r -t 60 line <"$tmp/ready" || true
[ "${line:-}" = ready ] || { stop; cat "$tmp/spaced.log" >&2; fail "the unpacked spaced did not get ready"; }
for b in browser fake; do
  grep -q "bootstrap: runtime bundle $b " "$tmp/spaced.log" ||
    { stop; cat "$tmp/spaced.log" >&2; fail "the unpacked spaced did not load bundle $b"; }
done
stop

unit=$root/usr/lib/systemd/system/spaced.service
[ -f "$unit" ] || fail "no unit"
[ -f "$root/usr/lib/sysusers.d/spaced.conf" ] || fail "no sysusers.d entry"
for line in 'Type=notify' 'User=spaced' 'ProtectSystem=strict' 'PrivateTmp=yes' \
  'NoNewPrivileges=yes' 'ReadWritePaths=/var/lib/spaced /run/spaced' \
  'ExecStart=/usr/bin/spaced --config=/etc/spaced/spaced.conf'; do
  grep -qxF -- "$line" "$unit" || fail "the unit has no line $line"
done

# make install itself (PREFIX, DESTDIR), on this build tree, for the
# prefix it already has (/usr, above): nothing is built again.  Not the
# jobserver or the variables of a make that runs this test.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u CMAKE_FLAGS \
  make -C "$src" install BUILD="$build" PREFIX=/usr DESTDIR="$tmp/inst" \
  >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "make install failed"; }
inst_files=(etc/spaced/spaced.conf etc/spaced/bundles/browser.json
  usr/lib/systemd/system/spaced.service usr/lib/sysusers.d/spaced.conf)
for b in "${bins[@]}"; do inst_files+=("usr/bin/$b"); done
for f in "${inst_files[@]}"; do
  [ -e "$tmp/inst/$f" ] || fail "make install staged no $f"
done
cmp -s "$unit" "$tmp/inst/usr/lib/systemd/system/spaced.service" ||
  fail "make install's unit is not the package's"
echo "package: $(basename "$deb"): ${#bins[@]} binaries answer --version"
