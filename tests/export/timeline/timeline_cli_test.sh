#!/usr/bin/env bash
# `cilkprof view timeline` and `cilkprof export --format chrome-trace` on the synthetic
# timeline of timeline_test_profile.h: the rows it promises, the json form, the default
# width without a terminal, the errors, and the trace checked by check_chrome_trace.py
# (which must also reject broken traces).
#
# usage: timeline_cli_test.sh CILKPROF MAKE_PROFILE PYTHON WORK_DIR
set -u
if (($# != 4)); then
    echo "usage: $0 CILKPROF MAKE_PROFILE PYTHON WORK_DIR" >&2
    exit 2
fi
cilkprof=$1 make_profile=$2 python=$3 work=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
fail() {
    echo "FAIL: $*"
    ((failures++))
}

"$make_profile" t.cilkprof && "$make_profile" old.cilkprof --no-timeline || exit 1

# Text, 12 buckets of 1 ms: the rows of timeline_test_profile.h.
"$cilkprof" view timeline t.cilkprof --buckets 12 >text.out 2>text.err || fail "view timeline exited $?: $(cat text.err)"
for row in 'worker 0  #####..#   #' 'worker 1  ..###oLL' 'main      ------------' 'steals      1'; do
    grep -qxF -- "$row" text.out || fail "view timeline: no row '$row' in:"$'\n'"$(cat text.out)"
done
grep -q '12 buckets of 1.0 ms' text.out || fail "view timeline: the header does not say 12 buckets of 1.0 ms"

# Without a terminal: 80 columns (the name column is 10 wide: 69 buckets).
"$cilkprof" view timeline t.cilkprof >wide.out 2>&1 || fail "view timeline (default width) exited $?"
grep -q ' 69 buckets of ' wide.out || fail "view timeline: not 69 buckets in 80 columns"
awk 'length($0) > 80 && /^(worker|main|steals|  )/ { exit 1 }' wide.out || fail "view timeline: a row is wider than 80 columns"
grep -qE '^worker 0 +helper 100% +compute 50% +compute 100% +compute 100%$' wide.out ||
    fail "view timeline: worker 0's top functions are not helper 100%, compute 50%, compute 100%, compute 100%"

# JSON.
"$cilkprof" view timeline t.cilkprof --buckets 12 --format json >view.json || fail "view timeline --format json exited $?"
"$python" - view.json <<'PY' || fail "view timeline --format json: unexpected content"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = {t["name"]: t["row"] for t in doc["tracks"]}
assert rows == {"worker 0": "#####..#   #", "worker 1": "..###oLL    ", "main": "------------"}, rows
assert doc["steals"] == [0, 0, 1] + [0] * 9, doc["steals"]
assert doc["bucket_ns"] == 1000000 and doc["buckets"] == 12
w0 = doc["tracks"][0]
assert w0["worker"] == 0 and w0["sync_waits"] == 1 and w0["samples"]["working"] == 7, w0
assert w0["segments"][0]["function"] == "helper()" and doc["tracks"][2]["worker"] is None
PY

# Errors: no timeline (exit 1, one line), csv (exit 2).
"$cilkprof" view timeline old.cilkprof >/dev/null 2>err.out
status=$?
[[ $status == 1 ]] || fail "view timeline of a profile without timeline exited $status, not 1"
[[ $(cat err.out) == "cilkprof: no timeline in old.cilkprof: record one with cilkprof run --timeline" ]] ||
    fail "view timeline without timeline said: $(cat err.out)"
"$cilkprof" export old.cilkprof --format chrome-trace -o old.json 2>err.out
status=$?
[[ $status == 1 && ! -e old.json ]] || fail "export chrome-trace without timeline exited $status (or wrote old.json)"
grep -qF "no timeline in old.cilkprof: record one with cilkprof run --timeline" err.out ||
    fail "export chrome-trace without timeline said: $(cat err.out)"
"$cilkprof" view timeline t.cilkprof --format csv >/dev/null 2>&1
status=$?
[[ $status == 2 ]] || fail "view timeline --format csv exited $status, not 2"

# The trace, and the checker rejecting broken ones.
"$cilkprof" export t.cilkprof --format chrome-trace -o t.json || fail "export --format chrome-trace exited $?"
"$python" "$here/check_chrome_trace.py" t.json --min-slices 11 --min-flows 1 --min-threads 3 ||
    fail "the chrome trace is not well formed"
cat >bad.json <<'JSON'
{"traceEvents": [
 {"ph": "X", "name": "a", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
 {"ph": "X", "name": "b", "ts": 5, "dur": 10, "pid": 1, "tid": 1},
 {"ph": "X", "name": "c", "ts": 20, "dur": -1, "pid": 1, "tid": 1},
 {"ph": "s", "name": "steal", "cat": "steal", "id": 1, "ts": 3, "pid": 1, "tid": 1},
 {"ph": "B", "name": "d", "ts": 1, "pid": 1, "tid": 2},
 {"ph": "i", "name": "e", "ts": 1, "pid": 1}
]}
JSON
"$python" "$here/check_chrome_trace.py" bad.json >bad.out
[[ $? == 1 ]] || fail "check_chrome_trace.py accepted a broken trace"
for problem in 'overlaps the end' 'dur -1' 'flow id 1' 'never ended' 'no tid'; do
    grep -q -- "$problem" bad.out || fail "check_chrome_trace.py did not report '$problem'"
done

if ((failures > 0)); then
    echo "$failures failures"
    exit 1
fi
echo "view timeline and chrome-trace: all checks passed"
