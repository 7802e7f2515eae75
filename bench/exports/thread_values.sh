#!/usr/bin/env bash
# What the profile's per-thread values (Profile.thread_values, issue 16) cost: fib N on
# 2 workers profiled by a `cilkprof` before them and by one after (run time and peak
# memory, file size), then `summary`, `view top-down` and `export --format speedscope`
# of both files by the newer one. Medians of 3 (wall seconds, peak resident MB from
# /usr/bin/time); the machine is shared and noisy.
#
# Usage: bench/exports/thread_values.sh BEFORE_CILKPROF AFTER_CILKPROF FIB AGENT [N]
#   (AGENT: libcilkprof_agent.so; N: default 37)
set -euo pipefail
before=$1 after=$2 fib=$3 agent=$4 n=${5:-37}
work=$(mktemp -d "${TMPDIR:-/tmp}/cilkprof-thread-values-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
export CILKPROF_AGENT=$agent CILK_NWORKERS=2

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
measure() {
  local times=() mems=()
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" > /dev/null 2> "$work/err" || { cat "$work/err" >&2; return 1; }
    read -r t m < "$work/time"
    times+=("$t")
    mems+=("$m")
  done
  echo "$(printf '%s\n' "${times[@]}" | median) s, $(( $(printf '%s\n' "${mems[@]}" | median) / 1024 )) MB"
}

for who in before after; do
  bin=${!who}
  echo "$who: cilkprof run of fib $n: $(measure "$bin" run -q -f -o "$work/fib-$who.cilkprof" -- "$fib" "$n")"
  echo "$who: profile file $(stat -c %s "$work/fib-$who.cilkprof") bytes"
done
for who in before after; do
  echo "summary of the $who file: $(measure "$after" summary "$work/fib-$who.cilkprof")"
  echo "view top-down of the $who file: $(measure "$after" view top-down "$work/fib-$who.cilkprof")"
  echo "speedscope of the $who file: $(measure "$after" export "$work/fib-$who.cilkprof" --format speedscope \
    -o "$work/s-$who.json"), $(stat -c %s "$work/s-$who.json") bytes"
done
