#!/usr/bin/env python3
"""Asserts the exact logical call path of every cilkprof_probe() of probe_program.

Runs `cilkprof run` on probe_program CASE with two workers and forced steals
(CILK_NWORKERS=2 CILK_FORCE_STEAL=1: every continuation is resumed by the other
worker), reads the top-down view as JSON with the `probe` metric, and checks:
  * the number of probes recorded equals the number of probe calls the case makes;
  * every node with exclusive probe > 0 lies on an expected path: its path from
    main (function names with their call/spawn edges) matches the case's pattern;
  * every expected path carries exactly as many probes as the program takes it (for
    fib and parallel_for the expected paths are derived from the recursion).
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

# A path is rendered as "edge:name" tokens (the view's function names, as c++filt
# prints them: "(anonymous namespace)::fib(int)") joined by newlines, from main down.
# Each case maps regular expressions of whole paths to the number of probes expected
# on them. The inline frames that cilk::run and std::invoke leave between a caller and
# its callable (their exact list depends on the compiler's inlining) are matched as a
# group, and so is the spelling of the inline-only templates' arguments. cilk::run itself
# is never inlined (a computation's call site is the call of cilk::run): its frame is a
# real one, named with its return type.
INLINE_RUN = r"(call:(decltype\(auto\) )?(cilk::run|std::invoke|std::__invoke|std::__invoke_impl)<[^\n]*\n)*"


def lambda_of(function, parameters=""):
    """A lambda's call operator declared in `function` (its full name): numbered when
    an out-of-line copy's symbol gives the number, "{lambda(...)}" when it takes
    parameters and was inlined wherever it is called (docs/SYMBOLIZATION.md)."""
    signature = re.escape("(" + parameters + ")")
    return (re.escape(function) + r"::\{lambda(" + signature + r"(#\d+)?|\(\.\.\.\)|\(\))\}::operator\(\)" +
            "(" + signature + " const)?")


def call(name):
    return "call:" + ANON + re.escape(name)


def spawn_site(spawner):
    """The spawn call inlined into the spawning function: cilk::scope::spawn<lambda>."""
    return r"call:cilk::scope::spawn<" + re.escape(spawner) + r"::<lambda\(\)> >"


def expected_fresh_fiber(n):
    spawner = "(anonymous namespace)::fresh_fiber(int)"
    path = lines("call:main", call("fresh_fiber(int)"), spawn_site(spawner),
                 "spawn:" + lambda_of(spawner), call("probe_in_child()"))
    return n, {path: n}


def expected_continuation(n):
    return n, {lines("call:main", call("continuation(int)"), call("probe_in_continuation()")): n}


def fib_leaf_paths(n):
    """Every leaf path of fib(n) as the list of edges below the first fib frame:
    'spawn' for the spawned fib(n-1) branch (through its lambda), 'call' for fib(n-2)."""
    if n < 2:
        return [[]]
    return ([["spawn"] + rest for rest in fib_leaf_paths(n - 1)] +
            [["call"] + rest for rest in fib_leaf_paths(n - 2)])


def expected_fib(n):
    fib = "(anonymous namespace)::fib(int)"
    counts = {}
    for edges in fib_leaf_paths(n):
        tokens = ["call:main\n" + INLINE_RUN + "call:" + lambda_of("main"), call("fib(int)")]
        for e in edges:
            if e == "spawn":
                tokens += [spawn_site(fib), "spawn:" + lambda_of(fib), call("fib(int)")]
            else:
                tokens += [call("fib(int)")]
        key = lines(*tokens)
        counts[key] = counts.get(key, 0) + 1
    return sum(counts.values()), counts


def parallel_for_spawn_depth(i, lo, hi, grain=1):
    """How many spawn steps parallel_for_range(lo, hi) takes to reach index i: it
    spawns [lo, mid) and continues in place with [mid, hi) (cilk/cilk.hpp)."""
    depth = 0
    while hi - lo > grain:
        mid = lo + (hi - lo) // 2
        if i < mid:
            depth += 1
            hi = mid
        else:
            lo = mid
    return depth


def expected_parallel_for(n):
    body_type = "(anonymous namespace)::parallel_for_bodies(long int)::<lambda(long int)>"
    body = "(anonymous namespace)::parallel_for_bodies(long)"
    # parallel_for_range has a symbol: c++filt's spelling, the body's type included.
    pfr = (re.escape("void cilk::detail::parallel_for_range<" + body) + r"::\{lambda\(long\)#\d+\}" +
           re.escape(">(long, long, long, " + body) + r"::\{lambda\(long\)#\d+\}&\)")
    # The inline-only templates keep g++'s own spelling of their arguments.
    inline_pfr = r"cilk::detail::parallel_for_range<" + re.escape(body_type) + " >"
    step = lines(r"call:cilk::scope::spawn<" + inline_pfr + r"\(long int, long int, long int, " +
                 re.escape(body_type) + r"&\)::<lambda\(\)> >", "spawn:" + pfr)
    head = lines("call:main", call("parallel_for_bodies(long)"),
                 r"call:cilk::parallel_for<" + re.escape(body_type) + " >\n" + INLINE_RUN + "call:" + pfr)
    tail = lines("call:" + lambda_of(body, "long"), call("probe_in_body(long)"))
    counts = {}
    for i in range(n):
        d = parallel_for_spawn_depth(i, 0, n)
        key = lines(head, *([step] * d), tail)
        counts[key] = counts.get(key, 0) + 1
    return n, counts


CASES = {
    "fresh_fiber": (expected_fresh_fiber, 40),
    "continuation": (expected_continuation, 40),
    "fib": (expected_fib, 10),
    "parallel_for": (expected_parallel_for, 64),
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
    env = dict(os.environ, CILK_NWORKERS="2", CILK_FORCE_STEAL="1", CILKPROF_AGENT=args.agent)
    return probe_paths.check(args, [args.case, str(size)], env, total_expected, shapes)


if __name__ == "__main__":
    sys.exit(main())
