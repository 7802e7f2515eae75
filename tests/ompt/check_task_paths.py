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
import json
import os
import re
import subprocess
import sys

ANON = r"\(anonymous namespace\)::"


def call(name):
    return "call:" + ANON + re.escape(name)


# The function clang outlines a task's body into, called by libomp: the frame that
# carries the task edge. Its body (.omp_outlined..N) may show as inline frames of it.
TASK_ENTRY = r"task:\.omp_task_entry\.(\.\d+)?(\ncall:\.omp_outlined\.[^\n]*)*"
# A parallel region's outlined body (an implicit task), entered from the region's site.
REGION_BODY = r"task:\.omp_outlined\.(\.\d+)?(\ncall:\.omp_outlined\.[^\n]*)*"


def lines(*tokens):
    return "\n".join(tokens)


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


CASES = {
    "chain": (expected_chain, 8),
    "taskwait": (expected_taskwait, 20),
}


def walk(node, prefix, out):
    name = node.get("name", "")
    edge = node.get("edge", "call")
    path = prefix + [edge + ":" + name] if name != "<program root>" else prefix
    probe = node.get("metrics", {}).get("probe", {}).get("exclusive", 0)
    if probe:
        out.append((path, probe))
    for child in node.get("children", []):
        walk(child, path, out)


def render(path):
    for i, token in enumerate(path):
        if token == "call:main":
            return "\n".join(path[i:])
    return "\n".join(path)


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
    os.makedirs(args.workdir, exist_ok=True)
    profile = os.path.join(args.workdir, "probe.cilkprof")
    env = dict(os.environ, OMP_NUM_THREADS="2", CILKPROF_AGENT=args.agent)
    run = subprocess.run([args.cilkprof, "run", "-q", "-f", "-o", profile, "--unwind", args.unwind,
                          "--", args.program, args.case, str(size)],
                         env=env, capture_output=True, text=True, timeout=100)
    if run.returncode != 0:
        print("the profiled program failed:", run.returncode, run.stdout, run.stderr)
        return 1
    view = subprocess.run([args.cilkprof, "view", "top-down", "--metric", "probe", "--format", "json",
                           profile], capture_output=True, text=True, timeout=60)
    if view.returncode != 0:
        print("cilkprof view failed:", view.stderr)
        return 1
    found = []
    walk(json.loads(view.stdout), [], found)

    failures = []
    total = sum(p for _, p in found)
    if total != total_expected:
        failures.append(f"{total} probes recorded, {total_expected} calls made")
    compiled = {shape: re.compile(shape + r"\Z") for shape in shapes}
    seen = {}
    for path, count in found:
        text = render(path)
        matched = [shape for shape, rx in compiled.items() if rx.match(text)]
        if len(matched) != 1:
            failures.append(f"{'unexpected' if not matched else 'ambiguous'} path ({count:g} probes):\n    " +
                            text.replace("\n", "\n    "))
        else:
            seen[matched[0]] = seen.get(matched[0], 0) + count
    for shape, want in shapes.items():
        got = seen.get(shape, 0)
        if got != want:
            failures.append(f"{got:g} probes (expected {want}) on:\n    " + shape.replace("\n", "\n    "))
    if failures:
        print(f"case {args.case}, --unwind {args.unwind}: {len(failures)} failure(s)")
        for f in failures[:40]:
            print("  " + f)
        return 1
    print(f"case {args.case}, --unwind {args.unwind}: {total:g} probes, all on their expected paths")
    return 0


if __name__ == "__main__":
    sys.exit(main())
