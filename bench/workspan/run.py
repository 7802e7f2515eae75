#!/usr/bin/env python3
"""Overhead of the work/span instrumentation (issues 5 and 13; docs/PERFORMANCE.md).

For each example, runs the chosen modes alternately with the same worker count and
reports the medians of the program's own `time:` line (the parallel computation only),
each mode's ratio against the baseline, and the geometric means of the ratios.

    bench/workspan/run.py BUILD_DIR [--runs N] [--workers P] [--modes M,M,...] [example[:args] ...]

Modes (--modes, default none,scope: the issue-5 comparison):
    none        cilkprof-run --no-workspan -- bin/NAME           sampling only: the baseline
    scope       cilkprof-run --workspan=same -- bin/NAME         work/span, scope mode
    calls       cilkprof-run --workspan=same -- bin/NAME_calls   work/span, full call-site mode
                                                                 (-finstrument-functions, cilk::profile)
    bare        bin/NAME                                         no agent at all
    bare_calls  bin/NAME_calls                                   no agent: the hooks' compiled-in cost
The instrumented modes use --workspan=same: the default (separate) runs the program twice
and shows only the sampled run's output, whose `time:` line is the uninstrumented one.
Ratios are against `none` when it is measured, else against the first mode. The rounds
rotate the order of the modes, so neither a slow phase of the machine nor the position in
the round favours one mode.

The machine this runs on is usually shared: the medians of alternating runs damp the
noise but do not remove it. The load average is printed with each example; quote it with
the figures.
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

# mode -> (under the agent, work/span on, binary suffix, column title)
MODES = {
    "none": (True, False, "", "no instrumentation"),
    "scope": (True, True, "", "scope mode"),
    "calls": (True, True, "_calls", "full call sites"),
    "bare": (False, False, "", "no agent"),
    "bare_calls": (False, False, "_calls", "no agent, _calls"),
}


def compute_time(cmd, env):
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed with {out.returncode}:\n{out.stderr}")
    m = re.search(r"^time:\s*([0-9.eE+-]+)", out.stdout, re.M)
    if not m:
        sys.exit(f"{' '.join(cmd)} printed no 'time:' line")
    return float(m.group(1))


def command(mode, bindir, run, out, name, args):
    agent, workspan, suffix, _ = MODES[mode]
    program = [os.path.join(bindir, name + suffix)] + args
    if not agent:
        return program
    return [run, "-q", "-f", "-o", out] + (["--workspan=same"] if workspan else ["--no-workspan"]) + ["--"] + program


def parse_modes(text):
    modes = [m for m in text.split(",") if m]
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes or len(set(modes)) != len(modes):
        sys.exit(f"--modes {text}: give distinct modes among {', '.join(MODES)}")
    return modes


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_dir")
    ap.add_argument("--runs", type=int, default=5, help="runs per mode and example (default 5)")
    ap.add_argument("--workers", type=int, default=2, help="CILK_NWORKERS for every mode (default 2)")
    ap.add_argument("--modes", default="none,scope", help="comma-separated modes (default none,scope; see above)")
    ap.add_argument("examples", nargs="*", help="example names, optionally name:arg,arg (default: all)")
    a = ap.parse_intermixed_args()
    modes = parse_modes(a.modes)
    base = "none" if "none" in modes else modes[0]
    others = [m for m in modes if m != base]
    bindir = os.path.join(a.build_dir, "bin")
    run = os.path.join(bindir, "cilkprof-run")
    if not os.access(run, os.X_OK):
        sys.exit(f"{run} not found: build cilkprof-run, cilkprof_agent and the examples first")
    env = dict(os.environ, CILK_NWORKERS=str(a.workers))
    env.setdefault("CILKPROF_AGENT", os.path.join(a.build_dir, "lib", "libcilkprof_agent.so"))
    examples = a.examples or DEFAULT_EXAMPLES
    for spec in examples:
        name = spec.partition(":")[0]
        for m in modes:
            path = os.path.join(bindir, name + MODES[m][2])
            if not os.access(path, os.X_OK):
                sys.exit(f"{path} not found (mode {m}): build the examples"
                         + (" with CILKPROF_CALL_SITE_EXAMPLES=ON" if MODES[m][2] else ""))
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "p.cilkprof")
        for spec in examples:
            name, _, args = spec.partition(":")
            args = args.split(",") if args else []
            times = {m: [] for m in modes}
            for r in range(a.runs):  # alternate, rotating the order, so slow phases hit every mode
                for m in modes[r % len(modes):] + modes[:r % len(modes)]:
                    times[m].append(compute_time(command(m, bindir, run, out, name, args), env))
            med = {m: statistics.median(times[m]) for m in modes}
            load = os.getloadavg()[0]
            rows.append((spec, med, load))
            cols = "  ".join(f"{m} {med[m]:7.4f} s" for m in modes)
            ratios = "  ".join(f"{m}/{base} {med[m] / med[base]:5.2f}" for m in others)
            print(f"{spec:28s} {cols}  {ratios}  load {load:.2f}", flush=True)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    print("| example | " + " | ".join(f"{MODES[m][3]} (s)" for m in modes) + " | "
          + " | ".join(f"{m} / {base}" for m in others) + " | load |")
    print("|---|" + "---:|" * (len(modes) + len(others) + 1))
    for spec, med, load in rows:
        print(f"| {spec} | " + " | ".join(f"{med[m]:.4f}" for m in modes) + " | "
              + " | ".join(f"{med[m] / med[base]:.2f}" for m in others) + f" | {load:.1f} |")
    spawn_bound = ("fib", "fine_grained")
    groups = [("all", lambda s: True),
              ("without fib", lambda s: s.partition(":")[0] != "fib"),
              ("without fib, fine_grained", lambda s: s.partition(":")[0] not in spawn_bound)]
    for title, keep in groups:
        kept = [med for spec, med, _ in rows if keep(spec)]
        print(f"| geometric mean, {title} ({len(kept)}) |" + " |" * len(modes) + " "
              + " | ".join(f"{geo([med[m] / med[base] for med in kept]):.2f}" for m in others) + " | |")


if __name__ == "__main__":
    main()
