#!/usr/bin/env python3
"""End-to-end blame checks on the examples (statistical, with generous bounds).

Runs one example under `cilkprof run` with two workers and fast sampling, then checks:
  --check complete      at least 99.9% of the samples have a complete logical path
                        (partial_unwinds <= 0.1% of samples; at least --min-samples);
  --check idleness-in FUNCTION
                        FUNCTION (inclusive, bottom-up: every context merged, recursion
                        counted once) carries at least --share of the program's idleness;
  --check overhead-at FUNCTION
                        FUNCTION's rows (exclusive, bottom-up; the spawn site is the
                        inlined cilk::scope::spawn<...> frame) carry at least --share of
                        the program's overhead.
The complete-path check is applied in every mode.
"""
import argparse
import json
import os
import subprocess
import sys


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cilkprof", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--args", default="")
    ap.add_argument("--unwind", default="dwarf", choices=["dwarf", "fp"])
    ap.add_argument("--period", default="200us")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--min-samples", type=int, default=300)
    ap.add_argument("--idleness-in")
    ap.add_argument("--overhead-at")
    ap.add_argument("--share", type=float, default=0.8)
    # Frame-pointer mode walks glibc (built without frame pointers) poorly: exit paths
    # such as _dl_call_fini keep partial paths there, so its bound is looser.
    ap.add_argument("--max-partial", type=float, default=0.001)
    args = ap.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    profile = os.path.join(args.workdir, "example.cilkprof")
    env = dict(os.environ, CILK_NWORKERS="2", CILKPROF_AGENT=args.agent, CILKPROF_WORKSPAN="0")
    env.pop("CILK_FORCE_STEAL", None)
    r = run([args.cilkprof, "run", "-q", "-f", "-o", profile, "--unwind", args.unwind, "--period", args.period,
             "--", args.program] + args.args.split(), env=env, timeout=300)
    if r.returncode != 0:
        print("the profiled program failed:", r.returncode, r.stdout[-2000:], r.stderr[-2000:])
        return 1
    s = run([args.cilkprof, "summary", "--format", "json", profile], timeout=120)
    if s.returncode != 0:
        print("cilkprof summary failed:", s.stderr)
        return 1
    summary = json.loads(s.stdout)
    failures = []
    samples, partial = summary["samples"], summary["partial_unwinds"]
    print(f"{os.path.basename(args.program)} {args.args}: {samples} samples, {partial} partial, "
          f"work {summary.get('work', 0) / 1e6:.1f} ms, idleness {summary.get('idleness', 0) / 1e6:.1f} ms, "
          f"overhead {summary.get('overhead', 0) / 1e6:.1f} ms")
    if samples < args.min_samples:
        failures.append(f"only {samples} samples (need {args.min_samples} for the statistics)")
    if partial > args.max_partial * samples:
        failures.append(f"{partial} of {samples} samples have a partial path (more than {args.max_partial:.1%})")

    def bottom_up(metric):
        v = run([args.cilkprof, "view", "bottom-up", "--metric", metric, "--depth", "1", "--format", "json",
                 profile], timeout=120)
        if v.returncode != 0:
            raise SystemExit("cilkprof view failed: " + v.stderr)
        return json.loads(v.stdout)

    if args.idleness_in:
        tree = bottom_up("idleness")
        total = tree["metrics"]["idleness"]["inclusive"]
        mine = sum(c["metrics"]["idleness"]["inclusive"] for c in tree["children"] if c["name"] == args.idleness_in)
        print(f"  idleness in {args.idleness_in}: {mine / 1e6:.1f} of {total / 1e6:.1f} ms")
        if total <= 0 or mine < args.share * total:
            failures.append(f"{args.idleness_in} carries {mine:.0f} of {total:.0f} ns of idleness "
                            f"(want at least {args.share:.0%})")
    if args.overhead_at:
        tree = bottom_up("overhead")
        total = tree["metrics"]["overhead"]["inclusive"]
        mine = sum(c["metrics"]["overhead"]["exclusive"] for c in tree["children"]
                   if c["name"].startswith(args.overhead_at))
        print(f"  overhead at {args.overhead_at}...: {mine / 1e6:.1f} of {total / 1e6:.1f} ms")
        if total <= 0 or mine < args.share * total:
            failures.append(f"rows starting with {args.overhead_at} carry {mine:.0f} of {total:.0f} ns of "
                            f"overhead (want at least {args.share:.0%})")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
