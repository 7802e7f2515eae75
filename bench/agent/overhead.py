#!/usr/bin/env python3
"""Profiler overhead benchmark (issue 2): a CPU-bound program with 30-deep call stacks,
run plain, under the Cilkprof agent, under gperftools' CPU profiler and under
`perf record -g`, all at the same sampling rate, in alternation (round-robin, so drift
on this noisy 2-core machine hits every mode alike). Prints medians and ratios to
plain, for the program's own compute time and for the whole command.

    bench/agent/overhead.py --build build/default [--rounds 9] [--freq 1000] [--threads 1]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def find_gperftools():
    for path in ("/usr/lib/x86_64-linux-gnu/libprofiler.so.0", "/usr/lib/x86_64-linux-gnu/libprofiler.so"):
        if os.path.exists(path):
            return path
    return None


def perf_works():
    if not shutil.which("perf"):
        return False
    probe = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", "/dev/null", "--", "true"],
                           capture_output=True)
    return probe.returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build/default", help="build directory (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=9, help="runs per mode (default: %(default)s)")
    ap.add_argument("--freq", type=int, default=1000, help="samples per second per thread (default: %(default)s)")
    ap.add_argument("--threads", type=int, default=1, help="threads of the target (default: %(default)s)")
    ap.add_argument("--work", type=int, default=400000, help="target rounds (default: %(default)s, ~2 s)")
    ap.add_argument("--unwind", default="dwarf", choices=["dwarf", "fp"], help="Cilkprof unwinding mode")
    args = ap.parse_args()

    target = os.path.join(args.build, "bin", "bench_deep_stack")
    cilkprof_run = os.path.join(args.build, "bin", "cilkprof-run")
    for path in (target, cilkprof_run):
        if not os.access(path, os.X_OK):
            sys.exit(f"overhead.py: {path} not found; build first: cmake --build --preset default")
    tmp = tempfile.mkdtemp(prefix="cilkprof-bench-")
    program = [target, str(args.work), str(args.threads)]

    modes = {"plain": (program, {})}
    modes["cilkprof"] = ([cilkprof_run, "-q", "-f", "-F", str(args.freq), "--unwind", args.unwind,
                          "-o", os.path.join(tmp, "bench.cilkprof"), "--"] + program, {})
    gperf = find_gperftools()
    if gperf:
        modes["gperftools"] = (program, {"LD_PRELOAD": gperf, "CPUPROFILE": os.path.join(tmp, "gperf.prof"),
                                         "CPUPROFILE_FREQUENCY": str(args.freq)})
    else:
        print("gperftools' libprofiler not found (apt-get install libgoogle-perftools-dev): skipped")
    if perf_works():
        modes["perf record -g"] = (["perf", "record", "-q", "-g", "-F", str(args.freq),
                                    "-o", os.path.join(tmp, "perf.data"), "--"] + program, {})
    else:
        print("perf record does not work on this machine: skipped")

    compute = {m: [] for m in modes}
    command = {m: [] for m in modes}
    for r in range(args.rounds):
        for mode, (cmd, extra_env) in modes.items():
            env = dict(os.environ, **extra_env)
            start = time.monotonic()
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
            elapsed = time.monotonic() - start
            if proc.returncode != 0:
                sys.exit(f"{mode}: exited {proc.returncode}\n{proc.stderr}")
            line = next((l for l in proc.stdout.splitlines() if l.startswith("compute_seconds")), None)
            if line is None:
                sys.exit(f"{mode}: no compute_seconds line in output:\n{proc.stdout}")
            compute[mode].append(float(line.split()[1]))
            command[mode].append(elapsed)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    base_compute = statistics.median(compute["plain"])
    base_command = statistics.median(command["plain"])
    print(f"\n{args.rounds} alternating rounds, {args.freq} Hz, {args.threads} thread(s), "
          f"30-deep stacks, cilkprof unwind={args.unwind}")
    print(f"{'mode':<16} {'compute med (s)':>16} {'ratio':>7} {'command med (s)':>16} {'ratio':>7}")
    for mode in modes:
        mc = statistics.median(compute[mode])
        mw = statistics.median(command[mode])
        print(f"{mode:<16} {mc:>16.3f} {mc / base_compute:>7.3f} {mw:>16.3f} {mw / base_command:>7.3f}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
