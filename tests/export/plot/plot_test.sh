#!/usr/bin/env bash
# `cilkprof plot --speedup`: fib profiled on 1 and 2 workers; the SVG parses as XML and
# holds the two bound polylines and a measured point per profile (check_plot.py), and
# the errors say what to do. Leaves $WORKDIR/speedup.svg for plot_render_test.sh.
# Usage: plot_test.sh CILKPROF FIB WORKDIR
set -euo pipefail
cilkprof=$1 fib=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)
cd "$work"
rm -f speedup.svg

CILK_NWORKERS=1 "$cilkprof" run -q -f -o fib-1.cilkprof -- "$fib" 28 > /dev/null
CILK_NWORKERS=2 "$cilkprof" run -q -f -o fib-2.cilkprof -- "$fib" 28 > /dev/null
failed=0
"$cilkprof" plot --speedup fib-2.cilkprof fib-1.cilkprof -o speedup.svg
python3 "$here/check_plot.py" speedup.svg 1 2 || failed=1
# One profile: the bounds, and its own point only when it is the 1-worker run.
"$cilkprof" plot --speedup fib-2.cilkprof -o bounds-only.svg
python3 "$here/check_plot.py" bounds-only.svg || failed=1

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
CILK_NWORKERS=1 "$cilkprof" run -q -f --no-workspan -o fib-nows.cilkprof -- "$fib" 28 > /dev/null
expect_error "has no work/span data; record it with \`cilkprof run\`" plot --speedup fib-nows.cilkprof -o x.svg
CILK_NWORKERS=1 "$cilkprof" run -q -f -o fib-26.cilkprof -- "$fib" 26 > /dev/null
expect_error "different programs or inputs" plot --speedup fib-1.cilkprof fib-26.cilkprof -o x.svg
expect_error "need a 1-worker run" plot --speedup fib-2.cilkprof fib-2.cilkprof -o x.svg
expect_error "say which plot" plot fib-1.cilkprof -o x.svg
expect_error "one per profile" plot --speedup fib-1.cilkprof fib-2.cilkprof --workers 1 -o x.svg
expect_error "cannot write in /nonexistent" plot --speedup fib-1.cilkprof -o /nonexistent/x.svg
[[ ! -e x.svg ]] || { echo "FAILED: a failed plot left x.svg"; failed=1; }
exit $failed
