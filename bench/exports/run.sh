#!/usr/bin/env bash
# The exports at scale (issue 16): every format `cilkprof export` has (its --help
# lists them, from cli/src/export/format_table.cc), on generated profiles of 100k,
# 250k and 500k calling contexts (tests/cli/make_synthetic_profile.cc, the shape of
# bench/analysis and the scale test): wall seconds and peak resident MB
# (/usr/bin/time), the output's size, and the growth from 100k to 500k contexts,
# which is 5x for an exporter linear in the profile. `cilkprof summary` is the
# baseline: reading the profile, which every export does too.
# A format the synthetic profiles cannot give (no timeline, no work/span) is listed
# with the exporter's message. Each figure is the median of ROUNDS runs; the machine
# is shared and noisy.
#
# Usage: bench/exports/run.sh [BUILD_DIR] [ROUNDS]    (default build/default, 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/default}
rounds=${2:-3}
bin=$build/bin
work=$(mktemp -d "${TMPDIR:-/tmp}/cilkprof-exports-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT

for tool in cilkprof cilkprof_make_synthetic_profile; do
  [ -x "$bin/$tool" ] || { echo "missing $bin/$tool: build the targets cilkprof and cilkprof_make_synthetic_profile" >&2; exit 1; }
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Runs "$@" ROUNDS times, output to $work/out; prints "median_seconds median_MB", or
# "error MESSAGE" when the command fails.
measure() {
  local times=() mems=()
  for _ in $(seq "$rounds"); do
    if ! /usr/bin/time -f "%e %M" -o "$work/time" "$@" > "$work/out" 2> "$work/err"; then
      echo "error $(grep -v '^Command exited' "$work/err" | tail -1)"
      return 0
    fi
    read -r t m < "$work/time"
    times+=("$t")
    mems+=("$m")
  done
  printf '%s %s\n' "$(printf '%s\n' "${times[@]}" | median)" \
    "$(printf '%s\n' "${mems[@]}" | median | awk '{ printf "%.0f", $1 / 1024 }')"
}

# The formats, from the --format line of `cilkprof export --help`: "Output format: name
# (description); name (description)." (descriptions hold parentheses of their own).
mapfile -t formats < <("$bin/cilkprof" export --help | python3 -c '
import re, sys
text = " ".join(sys.stdin.read().split())
text = text[text.index("Output format:") + len("Output format:"):]
depth, word = 0, ""
for c in text:
    if c == "(":
        if depth == 0 and word.strip():
            print(word.strip())
        depth += 1
    elif c == ")":
        depth -= 1
    elif depth == 0:
        word = "" if c in ";." else word + c
        if c == "-" and word.strip().startswith("-"):
            break  # the next option
')
echo "formats: ${formats[*]}"

sizes=(100000 250000 500000)
for n in "${sizes[@]}"; do
  "$bin/cilkprof_make_synthetic_profile" -o "$work/synth-$n.cilkprof" --contexts "$n" --depth 64 --functions 40 --seed 7
  printf 'synth-%-6s %6.1f MB profile file\n' "$n" "$(stat -c %s "$work/synth-$n.cilkprof" | awk '{ print $1 / 1048576 }')"
done

echo
echo "# median seconds / peak MB over $rounds runs; output size; growth 100k -> 500k (time, memory)"
printf '%-14s' format
for n in "${sizes[@]}"; do printf ' | %-27s' "$((n / 1000))k contexts"; done
printf ' | growth\n'
for format in summary "${formats[@]}"; do
  printf '%-14s' "$format"
  first="" last=""
  for n in "${sizes[@]}"; do
    profile=$work/synth-$n.cilkprof
    if [ "$format" = summary ]; then
      result=$(measure "$bin/cilkprof" summary "$profile")
    else
      result=$(measure "$bin/cilkprof" export "$profile" --format "$format" -o "$work/export")
    fi
    if [ "${result%% *}" = error ]; then
      printf ' | %-27s' "n/a"
      last="error: ${result#error }"
      continue
    fi
    read -r t m <<< "$result"
    size=$(stat -c %s "$work/out" 2> /dev/null || echo 0)
    [ "$format" = summary ] || size=$(stat -c %s "$work/export")
    printf ' | %6.2f s %5d MB %7.1f MB' "$t" "$m" "$(echo "$size / 1048576" | bc -l)"
    [ -n "$first" ] || first="$t $m"
    last="$t $m"
  done
  if [ "${last%%:*}" = error ]; then
    printf ' | %s\n' "$last"
  else
    read -r t0 m0 <<< "$first"
    read -r t1 m1 <<< "$last"
    printf ' | %4.1fx %4.1fx\n' "$(echo "$t1 / ($t0 + 0.005)" | bc -l)" "$(echo "$m1 / $m0" | bc -l)"
  fi
done

# Formats of the timeline (chrome-trace) need a recorded one, which the synthetic
# profiles do not have: the bundled fib under `cilkprof run --timeline` instead, its
# timeline growing with the run (2 workers).
if [ -x "$bin/fib" ]; then
  echo
  echo "# timeline formats on recorded timelines of fib (cilkprof run --timeline, 2 workers)"
  for n in 33 35 37; do
    CILK_NWORKERS=2 "$bin/cilkprof" run -q -f --no-workspan --timeline -o "$work/fib$n.cilkprof" -- "$bin/fib" "$n" > /dev/null
    for format in "${formats[@]}"; do
      [ "$format" = chrome-trace ] || continue
      read -r t m <<< "$(measure "$bin/cilkprof" export "$work/fib$n.cilkprof" --format "$format" -o "$work/export")"
      printf 'fib %s: %-12s %6.2f s %5d MB, %.1f MB file (profile %.1f MB)\n' "$n" "$format" "$t" "$m" \
        "$(echo "$(stat -c %s "$work/export") / 1048576" | bc -l)" \
        "$(echo "$(stat -c %s "$work/fib$n.cilkprof") / 1048576" | bc -l)"
    done
  done
fi
