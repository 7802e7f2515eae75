#!/usr/bin/env python3
"""End-to-end checks of the agent's OMPT tool (issue 17; docs/OPENMP.md).

Runs one OpenMP program under `cilkprof run` (two OpenMP threads, work/span off) and
checks the profile through `cilkprof summary` and `cilkprof view` (JSON):
  always           the program ran to its end ("ok" on stdout, status 0);
  --expect tool    the agent's tool ran: idle samples were taken (only the OMPT
                   runtime view makes a thread IDLE), no runtime frame (__kmp*,
                   __kmpc*, libomp's unnamed code) is a leaf of more than
                   --max-runtime-leaf of the work, and no warning was given;
  --expect no-tool the program ran without the agent's tool: no idleness or idle
                   samples, and a warning containing --warning;
  --work-in F      F (exclusive, bottom-up) carries at least --share of the work;
  --idleness-in F  F (inclusive, bottom-up) carries at least --share of the idleness;
  --fork-child     the program forked one child, which ran serial code alone: its
                   profile (ompt.<pid>.cilkprof) has work and no idleness (the parent's
                   other OpenMP threads are no workers of the child's);
  --workspan-separate
                   work/span measured in a second run (cilkprof run's default) instead
                   of off: the run says nothing about it, and the first profile has
                   work and span (with --fork-child: the child, which ran no
                   computation, has none, and that is no problem to report);
  --conservation   the idleness handed out to working samples and the idle time the
                   idle threads measured agree within a factor --factor (with --clock
                   wall, which samples a waiting thread's time whether it spins or
                   sleeps, as it samples the working threads').
"""
import argparse
import json
import os
import subprocess
import sys


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def json_of(cmd):
    r = run(cmd, timeout=120)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {r.stderr}")
    return json.loads(r.stdout)


def is_runtime_frame(name):
    return name.startswith("__kmp") or name == "?? [libomp.so.5]" or "libomp" in name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cilkprof", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--args", default="")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--period", default="500us")
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for the program")
    ap.add_argument("--expect", choices=["tool", "no-tool"], required=True)
    ap.add_argument("--warning", default="")
    ap.add_argument("--expect-stdout", default="")
    ap.add_argument("--max-runtime-leaf", type=float, default=0.25)
    ap.add_argument("--work-in")
    ap.add_argument("--idleness-in")
    ap.add_argument("--share", type=float, default=0.5)
    ap.add_argument("--conservation", action="store_true")
    ap.add_argument("--fork-child", action="store_true")
    ap.add_argument("--workspan-separate", action="store_true")
    ap.add_argument("--factor", type=float, default=3.0)
    ap.add_argument("--min-samples", type=int, default=20)
    args = ap.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    for old in os.listdir(args.workdir):  # an earlier run's profiles (a fork child's has its pid)
        if old.startswith("ompt.") and old.endswith(".cilkprof"):
            os.remove(os.path.join(args.workdir, old))
    profile = os.path.join(args.workdir, "ompt.cilkprof")
    env = dict(os.environ, CILKPROF_AGENT=args.agent, OMP_NUM_THREADS=args.threads)
    if not args.workspan_separate:
        env["CILKPROF_WORKSPAN"] = "0"
    env.pop("OMP_TOOL", None)
    for item in args.env:
        name, _, value = item.partition("=")
        env[name] = value
    r = run([args.cilkprof, "run", "-q", "-f", "-o", profile, "--period", args.period, "--clock", args.clock, "--",
             args.program] +
            args.args.split(), env=env, timeout=600)
    failures = []
    if r.returncode != 0 or "ok" not in r.stdout.split():
        print("the profiled program failed:", r.returncode, r.stdout[-2000:], r.stderr[-2000:])
        return 1
    if args.workspan_separate and r.stderr.strip():
        failures.append(f"cilkprof run said: {r.stderr.strip()!r}")
    if args.expect_stdout and args.expect_stdout not in r.stdout:
        failures.append(f"the program's output lacks {args.expect_stdout!r}: {r.stdout!r}")

    summary = json_of([args.cilkprof, "summary", "--format", "json", profile])
    samples = summary["samples"]
    if args.workspan_separate and summary.get("workspan_run") != "separate":
        failures.append(f"no work and span from a second run: workspan_run {summary.get('workspan_run')!r}")
    idle_samples = summary.get("idle_samples") or 0
    idleness = summary.get("idleness", 0) or 0
    work = summary.get("work", 0) or 0
    warnings = summary.get("warnings", [])
    blame = summary.get("blame") or {}
    idle_ns = blame.get("idle_ns", 0) or 0
    print(f"{os.path.basename(args.program)} {args.args}: {samples} samples, {idle_samples} idle samples, "
          f"work {work / 1e6:.1f} ms, idleness handed out {idleness / 1e6:.1f} ms, idle measured "
          f"{idle_ns / 1e6:.1f} ms, overhead {(summary.get('overhead', 0) or 0) / 1e6:.1f} ms, warnings {warnings}")
    if samples < args.min_samples:
        failures.append(f"only {samples} samples (need {args.min_samples})")

    def bottom_up(metric):
        return json_of([args.cilkprof, "view", "bottom-up", "--metric", metric, "--depth", "1", "--threshold", "0",
                        "--format", "json", profile])

    if args.expect == "tool":
        if idle_samples == 0:
            failures.append("no idle samples: the agent's OMPT tool did not run (or no thread was ever IDLE)")
        if warnings:
            failures.append(f"unexpected warnings: {warnings}")
        tree = bottom_up("work")
        total = tree["metrics"]["work"]["inclusive"]
        runtime = sum(c["metrics"]["work"]["exclusive"] for c in tree["children"] if is_runtime_frame(c["name"]))
        print(f"  work in runtime leaves: {runtime / 1e6:.1f} of {total / 1e6:.1f} ms")
        if total <= 0 or runtime > args.max_runtime_leaf * total:
            failures.append(f"runtime frames are leaves of {runtime:.0f} of {total:.0f} ns of work "
                            f"(at most {args.max_runtime_leaf:.0%} expected)")
    else:
        if idle_samples != 0 or idleness != 0:
            failures.append(f"idleness without the tool: {idle_samples} idle samples, {idleness} ns handed out")
        if args.warning and not any(args.warning in w for w in warnings):
            failures.append(f"no warning containing {args.warning!r}: {warnings}")

    if args.work_in:
        tree = bottom_up("work")
        total = tree["metrics"]["work"]["inclusive"]
        mine = sum(c["metrics"]["work"]["exclusive"] for c in tree["children"] if c["name"] == args.work_in)
        print(f"  work in {args.work_in}: {mine / 1e6:.1f} of {total / 1e6:.1f} ms")
        if total <= 0 or mine < args.share * total:
            failures.append(f"{args.work_in} carries {mine:.0f} of {total:.0f} ns of work (want {args.share:.0%})")
    if args.idleness_in:
        tree = bottom_up("idleness")
        total = tree["metrics"]["idleness"]["inclusive"]
        mine = sum(c["metrics"]["idleness"]["inclusive"] for c in tree["children"] if c["name"] == args.idleness_in)
        print(f"  idleness in {args.idleness_in}: {mine / 1e6:.1f} of {total / 1e6:.1f} ms")
        if total <= 0 or mine < args.share * total:
            failures.append(f"{args.idleness_in} carries {mine:.0f} of {total:.0f} ns of idleness "
                            f"(want {args.share:.0%})")
    if args.conservation:
        if idle_ns <= 0 or idleness <= 0:
            failures.append(f"conservation: nothing to compare (idle {idle_ns} ns, idleness {idleness} ns)")
        elif not (1 / args.factor <= idleness / idle_ns <= args.factor):
            failures.append(f"conservation: idleness handed out {idleness:.0f} ns vs idle measured {idle_ns:.0f} ns "
                            f"(ratio {idleness / idle_ns:.2f}, want within x{args.factor})")
    if args.fork_child:
        children = sorted(f for f in os.listdir(args.workdir)
                          if f.startswith("ompt.") and f.endswith(".cilkprof") and f != "ompt.cilkprof")
        if len(children) != 1:
            failures.append(f"expected the fork child's profile beside ompt.cilkprof, found {children}")
        else:
            child = json_of([args.cilkprof, "summary", "--format", "json", os.path.join(args.workdir, children[0])])
            child_work = child.get("work", 0) or 0
            child_idleness = child.get("idleness", 0) or 0
            print(f"  fork child {children[0]}: work {child_work / 1e6:.1f} ms, idleness {child_idleness / 1e6:.1f} ms")
            if child_work <= 0 or child_idleness != 0:
                failures.append(f"the fork child ran alone: work {child_work:.0f} ns, idleness {child_idleness:.0f} ns "
                                f"(want work and no idleness)")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
