#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every test:
#   1. the default build: unit, end-to-end (the preloaded agent in unsanitized
#      programs), fuzz smoke tests;
#   2. AddressSanitizer and UndefinedBehaviorSanitizer builds of the tools, the runtime
#      and their unit tests;
#   3. ThreadSanitizer on the runtime and the aggregator.
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

run_preset default
if [ "$quick" -eq 0 ]; then
  run_preset asan
  run_preset ubsan
  run_preset tsan
fi
echo "=== all test suites passed"
