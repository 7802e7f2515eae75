#!/usr/bin/env bash
# The analysis side at scale (issue 11): how long `cilkprof summary` and the views take,
# and how much memory, on the profiles that once took a minute and gigabytes:
#   fib37, fib39   the bundled fib example (recursive divide and conquer, 2 workers)
#   mutual         bench_mutual_recursion: 2 threads, 60-deep random mutual recursion
#   synth-1m/5m    generated profiles of 1 and 5 million contexts (growth check)
# beside the peer on the same program: `perf report` on `perf record -g` of fib 37
# (pprof joins once `cilkprof export --format pprof` exists). Then `cilkprof run`'s
# whole command with its summary against `-q`, on fib 37.
# Each figure is the median of ROUNDS runs (wall seconds, peak resident MB from
# /usr/bin/time); the machine is shared and noisy.
#
# Usage: bench/analysis/run.sh [BUILD_DIR] [ROUNDS]    (default build/default, 5)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/default}
rounds=${2:-5}
bin=$build/bin
work=$(mktemp -d "${TMPDIR:-/tmp}/cilkprof-analysis-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT

for tool in cilkprof cilkprof-run fib bench_mutual_recursion cilkprof_make_synthetic_profile; do
  [ -x "$bin/$tool" ] || { echo "missing $bin/$tool: build the default preset (with benchmarks) first" >&2; exit 1; }
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Runs "$@" ROUNDS times; prints "median_seconds median_MB".
measure() {
  local times=() mems=()
  for _ in $(seq "$rounds"); do
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" > /dev/null 2> "$work/err" || { cat "$work/err" >&2; return 1; }
    read -r t m < "$work/time"
    times+=("$t")
    mems+=("$m")
  done
  printf '%s %s\n' "$(printf '%s\n' "${times[@]}" | median)" \
    "$(printf '%s\n' "${mems[@]}" | median | awk '{ printf "%.0f", $1 / 1024 }')"
}

echo "# profiles"
"$bin/cilkprof-run" -q -o "$work/fib37.cilkprof" -- "$bin/fib" 37 > /dev/null
"$bin/cilkprof-run" -q -o "$work/fib39.cilkprof" -- "$bin/fib" 39 > /dev/null
"$bin/cilkprof-run" -q -o "$work/mutual.cilkprof" -- "$bin/bench_mutual_recursion" 3 > /dev/null
"$bin/cilkprof_make_synthetic_profile" -o "$work/synth-1m.cilkprof" --contexts 1000000
"$bin/cilkprof_make_synthetic_profile" -o "$work/synth-5m.cilkprof" --contexts 5000000
for p in fib37 fib39 mutual synth-1m synth-5m; do
  nodes=$("$bin/cilkprof" view top-down --threshold 0 --format csv "$work/$p.cilkprof" | wc -l)
  printf '%-9s %6.1f MB file, %8d top-down rows, %6s samples\n' "$p" \
    "$(stat -c %s "$work/$p.cilkprof" | awk '{ print $1 / 1048576 }')" "$((nodes - 1))" \
    "$("$bin/cilkprof" summary --format json "$work/$p.cilkprof" | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])')"
done

echo
echo "# cilkprof analysis: median seconds / peak MB over $rounds runs"
printf '%-9s | %-15s | %-15s | %-15s | %-15s | %-15s\n' profile summary "view top-down" "view bottom-up" "view flat" \
  "top-down json"
for p in fib37 fib39 mutual synth-1m synth-5m; do
  row=()
  for command in "summary" "view top-down" "view bottom-up" "view flat" "view top-down --format json"; do
    read -r t m <<< "$(measure "$bin/cilkprof" $command "$work/$p.cilkprof")"
    row+=("$(printf '%6.2f s %5d MB' "$t" "$m")")
  done
  printf '%-9s | %s | %s | %s | %s | %s\n' "$p" "${row[@]}"
done

echo
echo "# peer: perf report on perf record -g -F 1000 of fib 37 (the same program)"
if command -v perf > /dev/null && perf record -q -g -F 1000 -o "$work/perf.data" -- "$bin/fib" 37 > /dev/null 2>&1; then
  read -r t m <<< "$(measure perf report -i "$work/perf.data" --stdio --no-children)"
  printf 'perf report --no-children (top-down by symbol): %6.2f s %5d MB\n' "$t" "$m"
  read -r t m <<< "$(measure perf report -i "$work/perf.data" --stdio --children)"
  printf 'perf report --children (with callers):          %6.2f s %5d MB\n' "$t" "$m"
else
  echo "perf record is not available here (perf_event_paranoid?); no peer figures"
fi

echo
echo "# cilkprof run fib 37: the whole command with its summary against -q, alternating"
quiet=() loud=()
for _ in $(seq "$rounds"); do
  /usr/bin/time -f "%e" -o "$work/time" "$bin/cilkprof-run" -q -f -o "$work/run.cilkprof" -- "$bin/fib" 37 > /dev/null 2>&1
  quiet+=("$(cat "$work/time")")
  /usr/bin/time -f "%e" -o "$work/time" "$bin/cilkprof-run" -f -o "$work/run.cilkprof" -- "$bin/fib" 37 > /dev/null 2>&1
  loud+=("$(cat "$work/time")")
done
q=$(printf '%s\n' "${quiet[@]}" | median)
l=$(printf '%s\n' "${loud[@]}" | median)
printf 'with -q %.2f s, with the summary %.2f s: ratio %.3f (target <= 1.2)\n' "$q" "$l" "$(echo "$l / $q" | bc -l)"
