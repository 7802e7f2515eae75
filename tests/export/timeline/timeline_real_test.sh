#!/usr/bin/env bash
# The timeline's consumers on a real recording: `cilkprof run --timeline` of fib on two
# workers, then `cilkprof view timeline` and `cilkprof export --format chrome-trace`
# (checked by check_chrome_trace.py: one track per worker, slices, steal arrows).
# usage: timeline_real_test.sh CILKPROF FIB PYTHON WORKDIR
set -euo pipefail
cilkprof=$1 fib=$2 python=$3 work=$4
here=$(dirname "${BASH_SOURCE[0]}")
rm -rf "$work" && mkdir -p "$work"
CILK_NWORKERS=2 "$cilkprof" run -q --timeline --no-workspan --period 200us -o "$work/fib.cilkprof" -- "$fib" 32 > /dev/null
"$cilkprof" view timeline --buckets 60 "$work/fib.cilkprof" > "$work/timeline.txt"
cat "$work/timeline.txt"
grep -q "worker" "$work/timeline.txt" || { echo "FAIL: no worker row in the text timeline"; exit 1; }
grep -q "#" "$work/timeline.txt" || { echo "FAIL: no working bucket in the text timeline"; exit 1; }
"$cilkprof" export --format chrome-trace -o "$work/fib.trace.json" "$work/fib.cilkprof"
"$python" "$here/check_chrome_trace.py" "$work/fib.trace.json" --min-slices 2 --min-threads 2
echo "ok"
