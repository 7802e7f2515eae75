#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, profiles a bundled example
# with cilkprof-run and shows the top-down view of its profile.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)"

bin=build/default/bin
profile=build/demo-fib.cilkprof
rm -f "$profile"
"$bin/cilkprof-run" -o "$profile" -- "$bin/fib"
"$bin/cilkprof" view top-down --focus fib --depth 8 --threshold 5 "$profile"
