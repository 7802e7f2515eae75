#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every test:
#   1. the default build: unit, end-to-end (the preloaded agent in unsanitized
#      programs), fuzz smoke tests;
#   2. AddressSanitizer and UndefinedBehaviorSanitizer builds of the tools, the runtime
#      and their unit tests;
#   3. ThreadSanitizer on the runtime and the aggregator;
#   4. the libFuzzer targets (clang-14, ASan + UBSan), each run from its seed corpus
#      for a fixed number of inputs and a fixed seed (docs/FUZZING.md): a crash,
#      a leak, a sanitizer report or a broken oracle fails the run.
# Usage: scripts/test.sh [--quick]   (--quick: the default build only)
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
[ "${1:-}" = "--quick" ] && quick=1

./scripts/install-deps.sh
jobs=$(nproc)

run_preset() {
  local preset=$1; shift
  echo "=== [$preset] configure + build"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs" "$@"
  echo "=== [$preset] test"
  ctest --preset "$preset" -j "$jobs" --timeout 600
}

# The tsan build preset builds only the test directories that hold tsan-labelled tests
# (CMakePresets.json). Lists the programs behind the default build's tsan-labelled
# tests that the tsan configuration defines but that build did not make, i.e. tests
# whose directory is missing from that preset's targets.
tsan_programs_not_built() {
  ctest --preset default -N -L tsan --show-only=json-v1 | python3 -c '
import json, os, subprocess, sys
default, tsan = sys.argv[1:3]
programs = set()
for test in json.load(sys.stdin)["tests"]:
    for arg in test.get("command", []):
        path = arg.split("=", 1)[-1]  # the program itself, or -DPROGRAM=<program>
        if path.startswith(default + "/"):
            programs.add(os.path.relpath(path, default))
for program in sorted(programs):
    defined = subprocess.run(["ninja", "-C", tsan, "-t", "query", program],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    if defined and not os.path.exists(os.path.join(tsan, program)):
        print(program)
' "$PWD/build/default" "$PWD/build/tsan"
}

run_preset default
if [ "$quick" -eq 0 ]; then
  run_preset asan
  run_preset ubsan
  run_preset tsan
  missing=$(tsan_programs_not_built)
  if [ -n "$missing" ]; then
    echo "=== [tsan] tests labelled tsan were not built by the tsan build preset: $missing"
    echo "    Add their test directory (<dir>/all) to the targets of build preset 'tsan' in CMakePresets.json."
    exit 1
  fi
  run_preset fuzz
fi
echo "=== all test suites passed"
