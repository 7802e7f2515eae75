#!/usr/bin/env bash
# `cilkprof export --format speedscope`: the files validate against the JSON schema the
# speedscope npm package ships (with ajv; both installed test-only from package.json and
# package-lock.json), their numbers match `cilkprof view flat`, and a profile with a
# timeline, or per-thread values, gets one profile per thread. Skipped (77) when npm cannot install them.
# Usage: speedscope_test.sh CILKPROF MAKE_TIMELINE_PROFILE FIB WORKDIR
set -euo pipefail
cilkprof=$1 make_timeline=$2 fib=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work/npm"
work=$(cd "$work" && pwd)
cd "$work"

if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  echo "SKIPPED: node and npm are needed to validate against speedscope's schema (apt-get install nodejs npm)"
  exit 77
fi
cp "$here/package.json" "$here/package-lock.json" "$work/npm/"
if ! (cd "$work/npm" && timeout 300 npm ci --ignore-scripts --no-audit --no-fund --prefer-offline > npm.log 2>&1); then
  echo "SKIPPED: npm could not install the speedscope package and ajv from the registry (see $work/npm/npm.log)"
  exit 77
fi
validate() { NODE_PATH="$work/npm/node_modules" node "$here/validate.js" "$@"; }

failed=0
expect_error() {  # expect_error TEXT ARGS...: fails with one line naming TEXT
  local text=$1 output status=0
  shift
  output=$("$cilkprof" "$@" 2>&1 > /dev/null) || status=$?
  if [[ $status -eq 0 || "$output" != *"$text"* ]]; then
    echo "FAILED: cilkprof $* -> status $status, '$output' (expected an error with '$text')"
    failed=1
  else
    echo "ok: cilkprof $* -> $output"
  fi
}

# A profile with a timeline: per-thread profiles, for the metrics a sample's state decides.
"$make_timeline" -o timeline.cilkprof
for metric in work overhead samples idleness; do
  "$cilkprof" export timeline.cilkprof --format speedscope --metric "$metric" -o "timeline-$metric.speedscope.json"
  validate "timeline-$metric.speedscope.json" || failed=1
  python3 "$here/check_speedscope.py" timeline "timeline-$metric.speedscope.json" "$metric" || failed=1
done

# fib on two workers, the real thing: schema, totals against the flat view, and one
# profile per thread (from the profile's per-thread values, no timeline) whose stacks
# add up to the merged profile's.
CILK_NWORKERS=2 "$cilkprof" run -q -f -o fib.cilkprof -- "$fib" 34 > /dev/null
for metric in work idleness samples effort; do
  "$cilkprof" export fib.cilkprof --format speedscope --metric "$metric" -o "fib-$metric.speedscope.json"
  validate "fib-$metric.speedscope.json" || failed=1
  "$cilkprof" view flat fib.cilkprof --format json --threshold 0 > "fib-flat.json"
  python3 "$here/check_speedscope.py" flat "fib-$metric.speedscope.json" fib-flat.json "$metric" || failed=1
  python3 "$here/check_speedscope.py" threads "fib-$metric.speedscope.json" "$metric" 2 || failed=1
done
# To standard output, as every text format.
"$cilkprof" export fib.cilkprof --format speedscope | validate /dev/stdin || failed=1

expect_error "is a ratio" export fib.cilkprof --format speedscope --metric "% idleness"
expect_error "unknown metric 'bogus'" export fib.cilkprof --format speedscope --metric bogus
expect_error "Sandwich" export fib.cilkprof --format speedscope --inverted
exit $failed
