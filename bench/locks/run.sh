#!/usr/bin/env bash
# The cost of the agent's lock interposition on an uncontended lock/unlock pair (issue
# 14; the target is at most 5 ns added). bench/locks/uncontended.c is run ROUNDS times
# in each of three ways, alternating so that the machine's drift hits all alike:
#   none      the program alone
#   inactive  the agent preloaded without an aggregator (CILKPROF_SOCKET unset): the
#             interposed functions run, with no thread record
#   agent     under cilkprof-run --no-workspan (CILKPROF_AGENT: this build's agent),
#             sampling at the default period
# and the medians of ns per pair are printed with the differences to `none`.
#
# Usage: bench/locks/run.sh [BUILD_DIR] [ROUNDS] [ITERATIONS]
#        (defaults: build/default, 11, 20000000). cilkprof-run is taken from BUILD_DIR,
#        else from build/default (it only hosts the aggregator).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/default}
rounds=${2:-11}
iterations=${3:-20000000}
agent=$build/lib/libcilkprof_agent.so
runner=$build/bin/cilkprof-run
[ -x "$runner" ] || runner=build/default/bin/cilkprof-run
[ -f "$agent" ] || { echo "missing $agent: build the cilkprof_agent target first" >&2; exit 1; }
[ -x "$runner" ] || { echo "missing cilkprof-run: build the default preset first" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cilkprof-locks-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -O2 -g -o "$work/uncontended" bench/locks/uncontended.c -lpthread

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
figure() { awk '/^ns_per_pair/ { print $2 }'; }

: > "$work/none"; : > "$work/inactive"; : > "$work/agent"
for _ in $(seq "$rounds"); do
  env -u CILKPROF_SOCKET "$work/uncontended" "$iterations" | figure >> "$work/none"
  env -u CILKPROF_SOCKET LD_PRELOAD="$agent" CILKPROF_QUIET=1 "$work/uncontended" "$iterations" 2> /dev/null |
    figure >> "$work/inactive"
  rm -f "$work/p.cilkprof"
  CILKPROF_AGENT="$agent" "$runner" -q --no-workspan -o "$work/p.cilkprof" -- "$work/uncontended" "$iterations" 2> /dev/null |
    figure >> "$work/agent"
done
none=$(median < "$work/none")
printf 'uncontended pthread_mutex_lock/unlock pair, median of %s alternating runs of %s pairs\n' "$rounds" "$iterations"
for mode in none inactive agent; do
  m=$(median < "$work/$mode")
  printf '  %-9s %6.2f ns/pair  (%+.2f ns vs none)\n' "$mode" "$m" "$(awk -v a="$m" -v b="$none" 'BEGIN { print a - b }')"
done
