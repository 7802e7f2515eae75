#!/usr/bin/env python3
"""Overhead of the work/span instrumentation (issue 5; docs/PERFORMANCE.md).

For each example, runs `cilkprof-run --no-workspan` (sampling only: the uninstrumented
run) and `cilkprof-run` (sampling + work/span, the default) alternately, with the same
worker count, and reports the medians of the program's own `time:` line (the parallel
computation only), their ratio, and the geometric mean of the ratios.

    bench/workspan/run.py BUILD_DIR [--runs N] [--workers P] [example[:args] ...]

The machine this runs on is usually shared: the medians of alternating runs damp the
noise but do not remove it. Say so when you quote the figures.
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

DEFAULT_EXAMPLES = ["fib", "nqueens", "cilksort", "matmul", "rectmul", "strassen", "heat", "fft", "knapsack", "lu",
                    "cholesky", "serial_bottleneck", "fine_grained", "lock_contention"]


def compute_time(cmd, env):
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed with {out.returncode}:\n{out.stderr}")
    m = re.search(r"^time:\s*([0-9.eE+-]+)", out.stdout, re.M)
    if not m:
        sys.exit(f"{' '.join(cmd)} printed no 'time:' line")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_dir")
    ap.add_argument("--runs", type=int, default=5, help="runs per mode and example (default 5)")
    ap.add_argument("--workers", type=int, default=2, help="CILK_NWORKERS for both modes (default 2)")
    ap.add_argument("examples", nargs="*", help="example names, optionally name:arg,arg (default: all)")
    a = ap.parse_intermixed_args()
    bindir = os.path.join(a.build_dir, "bin")
    run = os.path.join(bindir, "cilkprof-run")
    if not os.access(run, os.X_OK):
        sys.exit(f"{run} not found: build cilkprof-run, cilkprof_agent and the examples first")
    env = dict(os.environ, CILK_NWORKERS=str(a.workers))
    env.setdefault("CILKPROF_AGENT", os.path.join(a.build_dir, "lib", "libcilkprof_agent.so"))
    examples = a.examples or DEFAULT_EXAMPLES
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "p.cilkprof")
        for spec in examples:
            name, _, args = spec.partition(":")
            program = [os.path.join(bindir, name)] + (args.split(",") if args else [])
            base, inst = [], []
            for _ in range(a.runs):  # alternate, so slow phases of the machine hit both
                base.append(compute_time([run, "-q", "-f", "-o", out, "--no-workspan", "--"] + program, env))
                inst.append(compute_time([run, "-q", "-f", "-o", out, "--"] + program, env))
            b, i = statistics.median(base), statistics.median(inst)
            rows.append((spec, b, i, i / b))
            print(f"{spec:28s} uninstrumented {b:8.4f} s  instrumented {i:8.4f} s  ratio {i / b:6.2f}", flush=True)
    print()
    print(f"| example | uninstrumented (s) | instrumented (s) | ratio |")
    print(f"|---|---:|---:|---:|")
    for spec, b, i, r in rows:
        print(f"| {spec} | {b:.4f} | {i:.4f} | {r:.2f} |")
    ratios = [r for _, _, _, r in rows]
    others = [r for spec, _, _, r in rows if not spec.startswith("fib")]
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
    print(f"| geometric mean, all | | | {geo(ratios):.2f} |")
    print(f"| geometric mean, without fib | | | {geo(others):.2f} |")


if __name__ == "__main__":
    main()
