#!/usr/bin/env bash
# Overhead of the agent's OMPT tool on OpenMP task programs (issue 17; docs/PERFORMANCE.md
# "OpenMP"). Two programs of examples/openmp, on OMP_NUM_THREADS threads (default 2):
#   fine    omp_fib 27 0           a task per call (about 630,000 tasks): creation and
#                                  scheduling dominate
#   coarse  omp_sort 4000000 250000  a mergesort whose leaf tasks sort 250k keys each
#                                  (a few dozen tasks)
# each run ROUNDS times in each of three ways, alternating so that the machine's drift
# hits all alike:
#   none      the program alone
#   sampling  under cilkprof-run --no-workspan (sampling at the default 1 ms period)
#   workspan  under cilkprof-run --workspan=same (sampling and work/span in one run)
# The figure is the program's own "time:" line (the parallel computation only, not
# start-up or the profile's writing); printed: medians in seconds and the ratio to none.
#
# Usage: bench/openmp/run.sh [BUILD_DIR] [ROUNDS] [THREADS] [PROGRAM_DIR]
#        (defaults: build/default, 7, 2, BUILD_DIR/bin). Needs the targets cilkprof-run and
#        cilkprof_agent in BUILD_DIR, example_omp_fib and example_omp_sort in PROGRAM_DIR
#        (clang++ and libomp installed).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/default}
rounds=${2:-7}
threads=${3:-2}
bin=${4:-$build/bin}
agent=$build/lib/libcilkprof_agent.so
runner=$build/bin/cilkprof-run
for need in "$agent" "$runner" "$bin/omp_fib" "$bin/omp_sort"; do
  [ -e "$need" ] || { echo "missing $need: build cilkprof-run and cilkprof_agent in $build, example_omp_fib and example_omp_sort in $bin" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/cilkprof-openmp-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=$threads

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
figure() { awk '/^time:/ { print $2 }'; }
declare -A programs=([fine]="$bin/omp_fib 27 0" [coarse]="$bin/omp_sort 4000000 250000")
modes=(none sampling workspan)

run() {  # run MODE COMMAND...: prints the program's time
  local mode=$1; shift
  rm -f "$work/p.cilkprof"
  case $mode in
    none) "$@" | figure ;;
    sampling) CILKPROF_AGENT="$agent" "$runner" -q --no-workspan -o "$work/p.cilkprof" -- "$@" | figure ;;
    workspan) CILKPROF_AGENT="$agent" "$runner" -q --workspan=same -o "$work/p.cilkprof" -- "$@" | figure ;;
  esac
}

for name in fine coarse; do
  for mode in "${modes[@]}"; do : > "$work/$name.$mode"; done
  # shellcheck disable=SC2086  # the program's words
  for _ in $(seq "$rounds"); do
    for mode in "${modes[@]}"; do run "$mode" ${programs[$name]} >> "$work/$name.$mode"; done
  done
done

echo "OpenMP overhead: median of $rounds runs, $threads threads, program's own time (s)"
printf '%-8s %-32s %10s %10s %10s %10s %10s\n' program command none sampling ratio workspan ratio
for name in fine coarse; do
  none=$(median < "$work/$name.none")
  sampling=$(median < "$work/$name.sampling")
  workspan=$(median < "$work/$name.workspan")
  printf '%-8s %-32s %10.3f %10.3f %9.2fx %10.3f %9.2fx\n' "$name" "${programs[$name]#"$bin/"}" \
    "$none" "$sampling" "$(echo "$sampling / $none" | bc -l)" "$workspan" "$(echo "$workspan / $none" | bc -l)"
done
