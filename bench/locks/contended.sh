#!/usr/bin/env bash
# The cost of lock blame on a contended workload (issue 14): examples/lock_contention on
# WORKERS workers (default 2), ROUNDS times in each of three ways, alternating so that
# the machine's drift hits all alike:
#   none      the program alone
#   no_blame  under cilkprof-run --no-workspan with CILKPROF_LOCKS=0: sampling, and the
#             lock calls passed straight through (an acquisition count each)
#   blame     under cilkprof-run --no-workspan: sampling and lock blame
# Prints the medians of the program's own `time:` line (the parallel computation) and of
# the whole command's wall time, with the ratios to `none` and blame / no_blame.
#
# Usage: bench/locks/contended.sh [BUILD_DIR] [ROUNDS] [N] [WORKERS]
#        (defaults: build/default, 7, 1000000, 2).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/default}
rounds=${2:-7}
n=${3:-1000000}
workers=${4:-2}
program=$build/bin/lock_contention
runner=$build/bin/cilkprof-run
for f in "$program" "$runner"; do
  [ -x "$f" ] || { echo "missing $f: build the examples and cilkprof-run first" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/cilkprof-locks-contended-XXXXXX")
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# One run: appends the program's `time:` seconds to $1.time and the wall seconds to $1.wall.
run() {
  local mode=$1; shift
  local start end
  start=$(date +%s.%N)
  "$@" > "$work/out" 2> /dev/null
  end=$(date +%s.%N)
  awk '/^time:/ { print $2 }' "$work/out" >> "$work/$mode.time"
  echo "$end - $start" | bc -l >> "$work/$mode.wall"
}

export CILK_NWORKERS=$workers
for _ in $(seq "$rounds"); do
  run none "$program" "$n"
  run no_blame env CILKPROF_LOCKS=0 "$runner" -q -f --no-workspan -o "$work/p.cilkprof" -- "$program" "$n"
  run blame "$runner" -q -f --no-workspan -o "$work/p.cilkprof" -- "$program" "$n"
done

printf 'lock_contention %s, %s workers, medians of %s runs (load %s)\n' "$n" "$workers" "$rounds" \
  "$(cut -d' ' -f1 /proc/loadavg)"
printf '%-9s %10s %10s %12s\n' mode 'time (s)' 'wall (s)' 'time / none'
base=$(median < "$work/none.time")
for mode in none no_blame blame; do
  t=$(median < "$work/$mode.time")
  w=$(median < "$work/$mode.wall")
  printf '%-9s %10.4f %10.4f %12.3f\n' "$mode" "$t" "$w" "$(echo "$t / $base" | bc -l)"
done
printf 'blame / no_blame (time): %.3f\n' \
  "$(echo "$(median < "$work/blame.time") / $(median < "$work/no_blame.time")" | bc -l)"
