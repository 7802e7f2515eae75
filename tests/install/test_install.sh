#!/bin/sh
# An install with `cmake --install <build> --prefix DIR` is usable as installed:
#   1. a Cilk program compiles and links against it with `pkg-config --cflags --libs
#      cilk` alone (cilk.pc finds its prefix from its own directory) and runs;
#   2. DIR/bin/cilkprof-run profiles it with the installed agent (DIR/lib/.../cilkprof),
#      found from its own location, and DIR/bin/cilkprof summarizes the profile;
#   3. the same client built with `pkg-config --cflags --libs cilk-profile` (function
#      hooks: full call-site mode) shows its serial function as a call site;
#   4. the systemd unit runs DIR/bin/cilkprofd and names documents DIR holds.
# Usage: test_install.sh CMAKE BUILD_DIR CXX PKG_CONFIG CLIENT_SOURCE
set -eu
cmake=$1 build=$2 cxx=$3 pkg_config=$4 client_source=$5

fail() { echo "FAIL: $*" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/cilkprof-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

echo "--- cmake --install $build --prefix $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; fail "cmake --install failed"; }

# Only the install tree's .pc files, not the system's.
pc_file=$(find "$prefix" -path '*/pkgconfig/cilk.pc')
[ -n "$pc_file" ] || fail "no cilk.pc under $prefix"
PKG_CONFIG_PATH=$(dirname "$pc_file")
PKG_CONFIG_LIBDIR=$PKG_CONFIG_PATH
export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR
flags=$("$pkg_config" --cflags --libs cilk) || fail "pkg-config --cflags --libs cilk failed"
echo "--- pkg-config --cflags --libs cilk: $flags"
libdir=$(realpath -m "$("$pkg_config" --variable=libdir cilk)")
case $libdir in
  "$(realpath "$prefix")"/*) ;;
  *) fail "cilk.pc's libdir is $libdir, outside the install prefix $prefix" ;;
esac

echo "--- compile the client against the install tree"
# $flags is a list of words on purpose.
# shellcheck disable=SC2086
"$cxx" -O2 -g -fno-omit-frame-pointer "$client_source" -o "$work/client" $flags ||
  fail "the client does not compile with \`pkg-config --cflags --libs cilk\` from $prefix"
CILK_NWORKERS=2 "$work/client" 20 >"$work/client.out" || fail "the client does not run"
grep -qx 'fib(20) = 6765' "$work/client.out" || { cat "$work/client.out" >&2; fail "the client's result is wrong"; }

echo "--- $prefix/bin/cilkprof-run -q -o client.cilkprof -- client"
# No CILKPROF_AGENT: the wrapper must find the installed agent itself.
env -u CILKPROF_AGENT -u LD_PRELOAD CILK_NWORKERS=2 \
  "$prefix/bin/cilkprof-run" -q -o "$work/client.cilkprof" -- "$work/client" 27 >"$work/run.out" ||
  { cat "$work/run.out" >&2; fail "cilkprof-run from the install tree failed"; }
agent=$(find "$prefix" -name libcilkprof_agent.so)
[ -n "$agent" ] || fail "no libcilkprof_agent.so under $prefix"
preloaded=$(sed -n 's/^LD_PRELOAD=//p' "$work/run.out")
[ "$(realpath "${preloaded%%:*}")" = "$(realpath "$agent")" ] ||
  fail "cilkprof-run preloaded '$preloaded', not the installed agent $agent"

echo "--- $prefix/bin/cilkprof summary client.cilkprof"
"$prefix/bin/cilkprof" summary "$work/client.cilkprof" >"$work/summary.out" ||
  { cat "$work/summary.out" >&2; fail "cilkprof summary from the install tree failed"; }
cat "$work/summary.out"
# The profile is the client's and holds its samples: the installed agent ran in it.
"$prefix/bin/cilkprof" summary --format json "$work/client.cilkprof" >"$work/summary.json" ||
  fail "cilkprof summary --format json from the install tree failed"
grep -Fq "\"program\": \"$work/client\"" "$work/summary.json" ||
  { cat "$work/summary.json" >&2; fail "the profile is not the client's"; }
# About 2 x 30 ms of CPU time at the default 1 ms period: tens of samples, never none.
grep -Eq '"samples": *[1-9]' "$work/summary.json" ||
  { cat "$work/summary.json" >&2; fail "the profile has no samples: the agent did not sample the client"; }
echo "--- the client built with \`pkg-config --cflags --libs cilk-profile\`: every call a call site"
profile_flags=$("$pkg_config" --cflags --libs cilk-profile) || fail "pkg-config --cflags --libs cilk-profile failed"
# shellcheck disable=SC2086
"$cxx" -O2 -g -fno-omit-frame-pointer "$client_source" -o "$work/client_calls" $profile_flags ||
  fail "the client does not compile with \`pkg-config --cflags --libs cilk-profile\` from $prefix"
env -u CILKPROF_AGENT -u LD_PRELOAD CILK_NWORKERS=2 \
  "$prefix/bin/cilkprof-run" -q -o "$work/calls.cilkprof" -- "$work/client_calls" 20 >"$work/calls.out" ||
  { cat "$work/calls.out" >&2; fail "cilkprof-run on the client with function hooks failed"; }
"$prefix/bin/cilkprof" view callsites "$work/calls.cilkprof" >"$work/callsites.out" ||
  { cat "$work/callsites.out" >&2; fail "cilkprof view callsites from the install tree failed"; }
# The client's serial leaf (no cilk::scope) is a call site only with function hooks.
grep -q ' call .*serial_leaf' "$work/callsites.out" ||
  { cat "$work/callsites.out" >&2; fail "no call-site row for the serial function serial_leaf"; }
echo "$work/callsites.out:"; head -8 "$work/callsites.out"

echo "--- the systemd unit names this install's cilkprofd and documents"
unit=$(find "$prefix" -name cilkprofd.service)
[ -n "$unit" ] || fail "no cilkprofd.service under $prefix"
exec_start=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")
[ "$exec_start" = "$prefix/bin/cilkprofd" ] && [ -x "$exec_start" ] ||
  fail "the unit's ExecStart= runs '$exec_start', not the installed $prefix/bin/cilkprofd"
for doc in $(sed -n 's/^Documentation=//p' "$unit" | tr ' ' '\n' | sed 's|^file://||'); do
  [ -f "$doc" ] || fail "the unit's Documentation= names $doc, which this install does not hold"
done
echo "install test passed"
