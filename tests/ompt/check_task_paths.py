#!/usr/bin/env python3
"""Asserts the exact logical call path of every cilkprof_probe() of task_probe_program.

Runs `cilkprof run` on task_probe_program CASE N (libomp, two threads, every task
forced onto the other thread than its creator's), reads the top-down view as JSON with
the `probe` metric, and checks, as tests/logical/check_probe_paths.py does for the
Cilk runtime:
  * the number of probes recorded equals the number of probe calls the case makes;
  * every node with exclusive probe > 0 lies on an expected path: its path from main
    (function names with their call/task edges) matches the case's pattern;
  * every expected path carries exactly as many probes as the program takes it.
Exit status 0 on success; otherwise the mismatching paths are printed.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import probe_paths  # noqa: E402
from probe_paths import lines  # noqa: E402

ANON = r"\(anonymous namespace\)::"


def call(name):
    return "call:" + ANON + re.escape(name)


# The function clang outlines a task's body into, called by libomp: the frame that
# carries the task edge. Its body (.omp_outlined..N) may show as inline frames of it.
TASK_ENTRY = r"task:\.omp_task_entry\.(\.\d+)?(\ncall:\.omp_outlined\.[^\n]*)*"
# A parallel region's outlined body (an implicit task), entered from the region's site.
REGION_BODY = r"task:\.omp_outlined\.(\.\d+)?(\ncall:\.omp_outlined\.[^\n]*)*"


def expected_chain(n):
    """Depth d (0..n) probes once, under d creation sites of spawn_next."""
    counts = {}
    for d in range(n + 1):
        tokens = ["call:main", call("run_chain(int)"), call("open_region(int)"), REGION_BODY, call("chain(int, int)")]
        for _ in range(d):
            tokens += [call("spawn_next(int, int)"), TASK_ENTRY, call("chain(int, int)")]
        tokens.append(call("probe_here()"))
        counts[lines(*tokens)] = 1
    return n + 1, counts


def expected_taskwait(n):
    head = ["call:main", call("run_taskwait(int)"), REGION_BODY, call("create_waiters(int)"), TASK_ENTRY,
            call("wait_for_child()")]
    waiter = lines(*head, call("probe_here()"))
    child = lines(*head, TASK_ENTRY, call("waited_child()"), call("probe_here()"))
    return 2 * n, {waiter: n, child: n}


def expected_tail(n):
    """spawn_tail's task creation is its last act, a jump to libomp: its frame comes
    from the call its caller made to it (locks/tail_call.h), and each task probes."""
    path = lines("call:main", call("run_tail(int)"), REGION_BODY, call("create_tails(int)"), call("spawn_tail(int)"),
                 TASK_ENTRY, call("tail_task_body()"), call("probe_here()"))
    return n, {path: n}


CASES = {
    "chain": (expected_chain, 8),
    "taskwait": (expected_taskwait, 20),
    "tail": (expected_tail, 20),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cilkprof", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    ap.add_argument("--unwind", required=True, choices=["dwarf", "fp"])
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()

    expect_fn, size = CASES[args.case]
    total_expected, shapes = expect_fn(size)
    env = dict(os.environ, OMP_NUM_THREADS="2", CILKPROF_AGENT=args.agent)
    return probe_paths.check(args, [args.case, str(size)], env, total_expected, shapes)


if __name__ == "__main__":
    sys.exit(main())
