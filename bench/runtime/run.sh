#!/usr/bin/env bash
# Runtime benchmarks: per-spawn cost, no-tool hook cost, and fib / matmul on our
# runtime, oneTBB task_group and OpenMP tasks (LLVM libomp via clang-14), with 1
# and 2 workers, medians of alternating runs; then T1/Ts and 2-worker speedup of
# the example programs if they are built.
#   bench/runtime/run.sh [build-dir] [runs]      (default build/runtime, 5 runs)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build/runtime}
RUNS=${2:-5}
FIB_N=${FIB_N:-32}
MATMUL_N=${MATMUL_N:-1024}

cmake --build "$BUILD" --target bench_runtime cilk >/dev/null
BIN=$BUILD/bin
# All three variants of each program compiled by the same compiler (clang++-14, which
# OpenMP on libomp needs). matmul's 64x64 kernel is one object linked into all
# three, so its leaves are the same machine code; only the runtimes differ. Ours
# links the libcilk.so of $BUILD.
CLANG_DIR=$BUILD/bench/runtime/clang
mkdir -p "$CLANG_DIR"
CILK_INC="-I$ROOT/scheduler_patch/cilk/include -I$ROOT/scheduler_patch/include"
clang++-14 -std=c++20 -O2 -g -c "$ROOT/bench/runtime/matmul_kernel.cpp" -o "$CLANG_DIR/matmul_kernel.o"
for p in fib matmul; do
  objects=()
  [[ $p == matmul ]] && objects=("$CLANG_DIR/matmul_kernel.o")
  clang++-14 -std=c++20 -O2 -g -fopenmp=libomp -DUSE_OMP "$ROOT/bench/runtime/$p.cpp" "${objects[@]}" \
    -o "$CLANG_DIR/bench_${p}_omp" -L/usr/lib/llvm-14/lib -Wl,-rpath,/usr/lib/llvm-14/lib
  clang++-14 -std=c++20 -O2 -g -DUSE_TBB "$ROOT/bench/runtime/$p.cpp" "${objects[@]}" -o "$CLANG_DIR/bench_${p}_tbb" -ltbb
  clang++-14 -std=c++20 -O2 -g -DUSE_CILK $CILK_INC "$ROOT/bench/runtime/$p.cpp" "${objects[@]}" \
    -o "$CLANG_DIR/bench_${p}_cilk" -L"$BUILD/lib" -lcilk -Wl,-rpath,"$BUILD/lib"
done

# The CPUs this process may run on (a container's cpuset need not start at 0).
mapfile -t CPUS < <(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)), sep="\n")')
# 1-worker runs are pinned to this CPU (see the examples section below).
PIN_CPU=${PIN_CPU:-${CPUS[-1]}}
pin_if_one() { if [[ $1 == 1 ]]; then echo "taskset -c $PIN_CPU"; fi; }

# The median of the numbers given as arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "== machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== spawn cost (ns), 1 worker"
CILK_NWORKERS=1 "$BIN/bench_cilk_spawn_cost"

echo "== side by side (clang++-14 -O2 for all three): median seconds of $RUNS rounds (the three"
echo "   runtimes back to back in each); the ratios are medians of the per-round ratios"
printf '%-8s %-7s %-6s %10s %10s %10s %9s %9s\n' program workers size cilk tbb omp tbb/cilk omp/cilk
for program in fib matmul; do
  size=$FIB_N; [[ $program == matmul ]] && size=$MATMUL_N
  for workers in 1 2; do
    declare -A t=([cilk]="" [tbb]="" [omp]="")
    tbb_ratio="" omp_ratio=""
    for ((r = 0; r < RUNS; r++)); do
      declare -A round=()
      for rt in cilk tbb omp; do
        exe=$CLANG_DIR/bench_${program}_$rt
        round[$rt]=$(CILK_NWORKERS=$workers OMP_NUM_THREADS=$workers $(pin_if_one "$workers") "$exe" "$size" | awk '{print $4}')
        t[$rt]+="${round[$rt]} "
      done
      tbb_ratio+="$(echo "${round[tbb]} / ${round[cilk]}" | bc -l) "
      omp_ratio+="$(echo "${round[omp]} / ${round[cilk]}" | bc -l) "
      unset round
    done
    c=$(median ${t[cilk]})
    b=$(median ${t[tbb]})
    o=$(median ${t[omp]})
    printf '%-8s %-7s %-6s %10.4f %10.4f %10.4f %9.3f %9.3f\n' "$program" "$workers" "$size" "$c" "$b" "$o" \
      "$(median $tbb_ratio)" "$(median $omp_ratio)"
  done
done

# Work efficiency and speedup of the example programs (target `examples`), from
# each program's own "time:" line (the computation only). Ts: the serial elision.
# The 1-worker runs (Ts and T1) are pinned to one CPU ($PIN_CPU, default the last
# one): on a shared host one virtual CPU can be slower than another for a while. Each
# round runs Ts, T1 and T2 back to back, and the ratios are per round (medians of
# T1/Ts and T1/T2 over the rounds), so slow phases of the host cancel out.
#
# The ceiling column is what this machine allows a 2-worker run at that moment: two
# 1-worker copies of the program started together, pinned to the first two allowed
# CPUs, finish in max(Ta, Tb); the ceiling is 2 T1 / max(Ta, Tb). On a machine with
# two idle, independent cores it is 2.0. On a VM whose two virtual CPUs share a
# physical core or are stolen by other guests it is lower, and for a compute-bound
# program no runtime's T1/T2 can beat it (a memory-bound one can: two copies need
# twice the memory traffic and cache of one 2-worker run).
if ((${#CPUS[@]} < 2)); then
  echo "== examples: skipped, the speedup and its ceiling need 2 CPUs (this process may use ${#CPUS[@]})"
  exit 0
fi
EX=${EXAMPLES_BIN:-$BIN}
EXAMPLES=${EXAMPLES:-fib nqueens cilksort matmul rectmul strassen heat fft knapsack lu cholesky}
echo "== examples: median compute seconds of $RUNS rounds; medians of the per-round T1/Ts, T1/T2 and ceiling (1 worker on CPU $PIN_CPU)"
compute_time() { "$@" | awk '/^time:/ {print $2}'; }
# Two 1-worker copies at once, one per CPU; prints the slower one's compute time.
slower_of_two_copies() {
  local exe=$1 a b
  a=$(mktemp) b=$(mktemp)
  CILK_NWORKERS=1 compute_time taskset -c "${CPUS[0]}" "$exe" > "$a" &
  CILK_NWORKERS=1 compute_time taskset -c "${CPUS[1]}" "$exe" > "$b" &
  wait
  cat "$a" "$b" | sort -g | tail -1
  rm -f "$a" "$b"
}
for name in $EXAMPLES; do
  [[ -x $EX/$name && -x $EX/${name}_serial ]] || { echo "$name: not built (cmake --build $BUILD --target examples)"; continue; }
  ts=(); t1=(); t2=(); eff=(); speedup=(); ceiling=()
  for ((r = 0; r < RUNS; r++)); do
    s=$(compute_time taskset -c "$PIN_CPU" "$EX/${name}_serial")
    a=$(CILK_NWORKERS=1 compute_time taskset -c "$PIN_CPU" "$EX/$name")
    b=$(CILK_NWORKERS=2 compute_time "$EX/$name")
    c=$(slower_of_two_copies "$EX/$name")
    ts+=("$s"); t1+=("$a"); t2+=("$b")
    eff+=("$(echo "$a / $s" | bc -l)"); speedup+=("$(echo "$a / $b" | bc -l)"); ceiling+=("$(echo "2 * $a / $c" | bc -l)")
  done
  printf '%-10s Ts=%-9s T1=%-9s T2=%-9s T1/Ts=%.3f T1/T2=%.2f ceiling=%.2f\n' "$name" \
    "$(median "${ts[@]}")" "$(median "${t1[@]}")" "$(median "${t2[@]}")" \
    "$(median "${eff[@]}")" "$(median "${speedup[@]}")" \
    "$(median "${ceiling[@]}")"
done
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
