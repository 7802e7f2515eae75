#!/usr/bin/env bash
# Measures every example at its default size: the serial elision (Ts), the
# runtime with one worker (T1) and with two workers (T2). Prints a Markdown
# table of medians of 3 runs: wall time of the whole process (hyperfine, which
# includes input generation and verification) and the program's own "time:"
# line (the parallel computation only).
#
#   examples/measure_examples.sh <build-dir> [example ...]
#
# Needs hyperfine and python3. The numbers are only as quiet as the machine.
set -euo pipefail

if [[ $# -lt 1 || "$1" == "-h" || "$1" == "--help" ]]; then
  echo "Usage: $0 <build-dir> [example ...]   (default: all examples)" >&2
  exit 2
fi
bin="$1/bin"
shift
examples=("$@")
if [[ ${#examples[@]} -eq 0 ]]; then
  examples=(fib nqueens cilksort matmul rectmul strassen heat fft knapsack lu cholesky
            serial_bottleneck fine_grained lock_contention)
fi
command -v hyperfine > /dev/null || { echo "hyperfine not found: apt-get install hyperfine" >&2; exit 1; }
for e in "${examples[@]}"; do
  for f in "$bin/$e" "$bin/${e}_serial"; do
    [[ -x "$f" ]] || { echo "$f not found: build the 'examples' target first" >&2; exit 1; }
  done
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# measure <label> <command>: prints "<wall median> <compute median>" in seconds.
measure() {
  local label="$1" command="$2"
  if ! hyperfine --runs 3 --export-json "$work/$label.json" --output "$work/$label.out" \
      --command-name "$label" "$command" > "$work/$label.log" 2>&1; then
    cat "$work/$label.log" >&2
    echo "$label: '$command' failed" >&2
    return 1
  fi
  python3 - "$work/$label.json" "$work/$label.out" <<'PY'
import json, statistics, sys
runs = json.load(open(sys.argv[1]))["results"][0]
codes = runs.get("exit_codes", [0])
if any(c != 0 for c in codes):
    sys.exit(f"{runs['command']}: a run exited with {codes}")
times = [float(l.split()[1]) for l in open(sys.argv[2]) if l.startswith("time:")]
print(f"{statistics.median(runs['times']):.3f} {statistics.median(times):.3f}")
PY
}

echo "| example | Ts wall | T1 wall | T2 wall | Ts compute | T1 compute | T2 compute | T1/Ts | T1/T2 |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for e in "${examples[@]}"; do
  read -r s_wall s_comp < <(measure "${e}_serial" "$bin/${e}_serial")
  read -r w1_wall w1_comp < <(measure "${e}_w1" "env CILK_NWORKERS=1 $bin/$e")
  read -r w2_wall w2_comp < <(measure "${e}_w2" "env CILK_NWORKERS=2 $bin/$e")
  python3 - "$e" "$s_wall" "$w1_wall" "$w2_wall" "$s_comp" "$w1_comp" "$w2_comp" <<'PY'
import sys
e, *v = sys.argv[1:]
sw, w1, w2, sc, c1, c2 = map(float, v)
ratio = lambda a, b: f"{a / b:.2f}" if b > 0 else "n/a"
print(f"| {e} | {sw:.3f} | {w1:.3f} | {w2:.3f} | {sc:.3f} | {c1:.3f} | {c2:.3f} | {ratio(c1, sc)} | {ratio(c1, c2)} |")
PY
done
