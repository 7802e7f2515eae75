#!/usr/bin/env bash
# The analysis at scale: a generated profile with a million contexts, the summary and
# every view run under an address-space limit (ulimit -v), so that a change that makes
# the analysis super-linear in time or memory cannot land unseen. The limit is about
# three times what the linear design needs (~200 MB resident for this profile).
# Usage: scale_test.sh CILKPROF MAKE_SYNTHETIC_PROFILE WORKDIR
set -euo pipefail
cilkprof=$1 make_profile=$2 work=$3
limit_kb=$((700 * 1024))
mkdir -p "$work"
profile="$work/scale-1m.cilkprof"
"$make_profile" -o "$profile" --contexts 1000000 --depth 64 --functions 40 --seed 7

failed=0
run() {
  local output
  if ! output=$(bash -c "ulimit -v $limit_kb; exec \"\$@\" > /dev/null" _ "$cilkprof" "$@" "$profile" 2>&1); then
    echo "FAILED under ulimit -v ${limit_kb} KB: cilkprof $* $profile"
    echo "$output" | tail -5
    failed=1
  else
    echo "ok: cilkprof $*"
  fi
}
run summary
run summary --format json
run summary --inline fold
run view top-down
run view top-down --threshold 0 --format json
run view top-down --format csv
run view top-down --focus "ns::function_3(int, std::vector<int, std::allocator<int> > const&)"
run view bottom-up
run view bottom-up --depth 3 --threshold 0 --format json
run view bottom-up --focus function_5
run view flat --threshold 0
run view flat --format csv --inline fold
rm -f "$profile"
exit $failed
