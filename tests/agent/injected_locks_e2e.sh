#!/bin/bash
# Lock blame in a process the agent was injected into (issue 15; docs/AGENT.md,
# "Injected: the program's calls"): lock_contention is started without the agent, then
# attached twice with `cilkprof attach` (which injects the agent the first time). Each
# window's profile must show the program's mutex waited for and blamed: the program's
# lock calls reach the agent only through the GOT slots rewritten at attach, and the
# second window checks that what the first detach restored can be redirected again.
#
# usage: injected_locks_e2e.sh CILKPROF LOCK_CONTENTION   (CILKPROF_AGENT set by CTest)
set -u
cilkprof=$1
program=$2
workers=4
dir=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$dir"/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; cat "$f" >&2; }; done
  exit 1
}

# Contends all the time: every item takes the one mutex (n large enough to outlast the test).
CILK_NWORKERS=$workers "$program" 10000000000 200 20 >"$dir/program.log" 2>&1 &
pid=$!
# Ready once its workers run (the main thread is one of them).
for _ in $(seq 600); do
  threads=$(ls "/proc/$pid/task" 2>/dev/null | wc -l)
  [ "$threads" -ge "$workers" ] && break
  kill -0 "$pid" 2>/dev/null || fail "lock_contention ended early"
  sleep 0.1
done
[ "$threads" -ge "$workers" ] || fail "lock_contention did not start its $workers workers"
grep -q cilkprof /proc/$pid/maps && fail "the agent is loaded before the attach"

for window in 1 2; do
  out="$dir/window$window.cilkprof"
  "$cilkprof" attach "$pid" --duration 1s -o "$out" >"$dir/attach$window.log" 2>&1 ||
    fail "cilkprof attach (window $window) failed"
  kill -0 "$pid" 2>/dev/null || fail "lock_contention died in window $window"
  "$cilkprof" view locks "$out" --format json >"$dir/locks$window.json" 2>"$dir/view$window.log" ||
    fail "cilkprof view locks (window $window) failed"
  python3 - "$dir/locks$window.json" "$window" <<'PY' || fail "window $window has no lock wait or blame"
import json, sys
rows = json.load(open(sys.argv[1]))
contended = sum(r["contended"] for r in rows)
wait = sum(r["wait_ns"] for r in rows)
blame = sum(r["blame_ns"] for r in rows)
print(f"window {sys.argv[2]}: {len(rows)} locks, contended {contended}, wait {wait} ns, blame {blame} ns")
sys.exit(0 if rows and contended > 0 and wait > 0 and blame > 0 else 1)
PY
done
echo "PASS"
