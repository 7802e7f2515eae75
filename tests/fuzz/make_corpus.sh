#!/usr/bin/env bash
# Regenerates the fuzzers' seed corpora, tests/fuzz/corpus/<target>/ (docs/FUZZING.md,
# "Corpora"): real spill files from short runs of example programs under the agent with
# the collector unreachable, real profiles (those spills imported, and cilkprof-run's
# own), and the synthetic seeds and variants that fuzz_make_corpus writes.
#
# Usage: tests/fuzz/make_corpus.sh PROGRAMS_BUILD [GENERATOR_BUILD]
#   PROGRAMS_BUILD   a build with the agent, cilkprof, cilkprof-run and the examples
#                    fib, lock_contention and serial_bottleneck (the default preset's)
#   GENERATOR_BUILD  where to build fuzz_make_corpus (default: PROGRAMS_BUILD)
#
# Rewrites the seeds it makes (the real ones change with every run: timing); keeps the
# crash regression seeds (regression-*), which are committed by hand with their fix.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
corpus=$src/tests/fuzz/corpus
programs=$(cd "${1:?usage: make_corpus.sh PROGRAMS_BUILD [GENERATOR_BUILD]}" && pwd)
generator_build=${2:-$programs}

for f in lib/libcilkprof_agent.so bin/cilkprof bin/cilkprof-run bin/fib bin/lock_contention bin/serial_bottleneck; do
  [ -x "$programs/$f" ] || { echo "make_corpus: $programs/$f is missing; build it first" >&2; exit 1; }
done
cmake --build "$generator_build" --target fuzz_make_corpus >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A spill file, as the agent writes it when no aggregator listens.
spill() {
  local name=$1; shift
  mkdir "$work/$name"
  env LD_PRELOAD="$programs/lib/libcilkprof_agent.so" CILKPROF_SOCKET="$work/nobody.sock" \
      CILKPROF_SPILL_DIR="$work/$name" CILKPROF_QUIET=1 "$@" >/dev/null 2>&1 || true
  mv "$work/$name"/cilkprof-*.spill "$work/real-$name.spill"
}
spill fib "$programs/bin/fib" 27                       # spawns, work/span sites
spill lock "$programs/bin/lock_contention" 20000 2000 2000  # threads, lock waits
spill serial "$programs/bin/serial_bottleneck" 100000 1000000 10000
# SIGKILL'd while running: no Goodbye.
mkdir "$work/killed"
env LD_PRELOAD="$programs/lib/libcilkprof_agent.so" CILKPROF_SOCKET="$work/nobody.sock" \
    CILKPROF_SPILL_DIR="$work/killed" CILKPROF_QUIET=1 "$programs/bin/fib" 40 >/dev/null 2>&1 &
sleep 0.15
kill -KILL $! 2>/dev/null || true
wait $! 2>/dev/null || true
mv "$work/killed"/cilkprof-*.spill "$work/real-killed.spill"

"$generator_build/bin/fuzz_make_corpus" "$corpus" "$work"/real-*.spill

# Real profiles: the spills imported (libdw symbols), and cilkprof-run's own. Seeds
# carry no .cilkprof suffix, which .gitignore keeps out of the repository.
for s in "$work"/real-*.spill; do
  name=$(basename "$s" .spill)
  "$programs/bin/cilkprof" import -f -o "$work/$name.cilkprof" "$s" >/dev/null 2>&1
done
"$programs/bin/cilkprof-run" -q -f -o "$work/run-fib.cilkprof" -- "$programs/bin/fib" 24 >/dev/null
"$programs/bin/cilkprof-run" -q -f --clock wall -o "$work/run-lock-wall.cilkprof" -- \
    "$programs/bin/lock_contention" 20000 2000 2000 >/dev/null
for p in "$work"/*.cilkprof; do mv "$p" "$corpus/profile/$(basename "$p" .cilkprof)"; done

for target in wire spill profile; do
  big=$(find "$corpus/$target" -type f -size +60k)
  [ -z "$big" ] || echo "make_corpus: larger than the fuzzers' 64 KiB -max_len (rerun): $big" >&2
  echo "make_corpus: $target: $(ls "$corpus/$target" | wc -l) seeds, $(du -sk "$corpus/$target" | cut -f1) KiB"
done
