#!/usr/bin/env bash
# Overhead of sampling with logical unwinding and blame (issue 4), side by side with
# gperftools' CPU profiler (physical stacks only), at 1 kHz per worker, 2 workers.
#
#   bench/logical/run.sh BUILD_DIR [RUNS]
#
# For each example (sizes of ~0.3-3 s of computation), RUNS rounds alternate five variants:
#   plain        the program alone
#   dwarf        cilkprof run --unwind dwarf --period 1ms (logical paths + blame)
#   fp           cilkprof run --unwind fp --period 1ms
#   gperftools   LD_PRELOAD=libprofiler.so.0 CPUPROFILE=... CPUPROFILE_FREQUENCY=1000
# The time compared is the computation's own ("time: X s", printed by every example,
# so that profile writing and symbolization after exit are not counted). Prints the
# median of each variant, the overhead against plain, and the geometric means.
# The work/span instrumentation is off (CILKPROF_WORKSPAN=0): it is issue 5's cost.
set -euo pipefail
build=${1:?usage: run.sh BUILD_DIR [RUNS]}
runs=${2:-5}
bin=$build/bin
agent=$build/lib/libcilkprof_agent.so
profiler=/usr/lib/x86_64-linux-gnu/libprofiler.so.0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CILK_NWORKERS=2 CILKPROF_WORKSPAN=0 CILKPROF_AGENT=$agent

declare -A args=(
  [fib]="34" [nqueens]="14" [cilksort]="8000000" [matmul]="1200" [rectmul]="1200 800 1600"
  [strassen]="2048" [heat]="3200 1600 80" [fft]="4194304" [lu]="2048" [cholesky]="2048"
  [serial_bottleneck]="2000000 1000000000 40000000" [fine_grained]="16000000"
)
names=(fib nqueens cilksort matmul rectmul strassen heat fft lu cholesky serial_bottleneck fine_grained)

seconds() { sed -n 's/^time: \([0-9.]*\) s.*/\1/p' | tail -1; }

run_variant() {  # variant program args...
  local variant=$1; shift
  case $variant in
    plain) "$@" ;;
    dwarf) "$bin/cilkprof" run -q -f -o "$tmp/p.cilkprof" --unwind dwarf --period 1ms -- "$@" ;;
    fp) "$bin/cilkprof" run -q -f -o "$tmp/p.cilkprof" --unwind fp --period 1ms -- "$@" ;;
    gperftools) LD_PRELOAD=$profiler CPUPROFILE=$tmp/g.prof CPUPROFILE_FREQUENCY=1000 "$@" ;;
  esac
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

variants=(plain dwarf fp gperftools)
printf "%-18s %9s %9s %9s %9s %8s %8s %8s\n" program plain dwarf fp gperf "dwarf%" "fp%" "gperf%"
declare -A logsum=([dwarf]=0 [fp]=0 [gperftools]=0)
count=0
for name in "${names[@]}"; do
  declare -A times=()
  for v in "${variants[@]}"; do times[$v]=""; done
  for ((r = 0; r < runs; r++)); do
    for v in "${variants[@]}"; do
      t=$(run_variant "$v" "$bin/$name" ${args[$name]} 2>/dev/null | seconds)
      times[$v]+="$t"$'\n'
    done
  done
  declare -A med=()
  for v in "${variants[@]}"; do med[$v]=$(printf "%s" "${times[$v]}" | median); done
  row=$(printf "%-18s %9.4f %9.4f %9.4f %9.4f" "$name" "${med[plain]}" "${med[dwarf]}" "${med[fp]}" "${med[gperftools]}")
  for v in dwarf fp gperftools; do
    pct=$(awk -v a="${med[$v]}" -v b="${med[plain]}" 'BEGIN {printf "%.1f", 100 * (a / b - 1)}')
    row+=$(printf " %8s" "$pct")
    logsum[$v]=$(awk -v s="${logsum[$v]}" -v a="${med[$v]}" -v b="${med[plain]}" 'BEGIN {print s + log(a / b)}')
  done
  echo "$row"
  count=$((count + 1))
done
printf "%-18s %39s" "geometric mean" ""
for v in dwarf fp gperftools; do
  awk -v s="${logsum[$v]}" -v n=$count 'BEGIN {printf " %8.1f", 100 * (exp(s / n) - 1)}'
done
echo
echo "(overheads in % of the plain median; $runs alternating runs; load: $(cut -d' ' -f1-3 /proc/loadavg))"
