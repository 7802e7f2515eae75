#!/usr/bin/env python3
"""Sampled shares against perf (issue 11, rough edge 8; docs/PERFORMANCE.md).

Profiles each program several times with `cilkprof-run` and with
`perf record -e cpu-clock -g -F 1000`, alternately, and prints per program a table of
shares side by side (medians, with the range over the runs):

  - the functions perf ranks first by exclusive share, and cilkprof's exclusive share of
    the same functions (inlined frames folded into their function, as perf sees them);
  - the modules (perf's --sort dso; cilkprof's flat view groups by module);
  - for tbb_mix and after_interruption, the inclusive share of the function the program
    times itself (tbb_heavy; after_interruption) beside that measurement
    (CLOCK_THREAD_CPUTIME_ID around each call, over the CPU time), in both kinds of runs.

On a program of the Cilk runtime, cilkprof charges the runtime's work to the user's
spawn and sync sites (the overhead metric, shown on its own row) and elides the
runtime's frames; perf shows the runtime's functions in libcilk. Those rows differ by
design.

  python3 bench/shares/run.py --build build/default [--runs 5] [--contend]
                              [--agent PATH] [--programs tbb_mix,fib,nqueens]

Programs: tbb_mix (bench/shares/tbb_mix.cpp, built here with g++ -ltbb), the bundled
examples fib 38 and nqueens 15, and after_interruption (the agent's regression test
program, <build>/bin/agent_sampling_program).

--contend keeps one competing busy process on the last CPU during every run, as on a
shared machine (the issue's numbers came from one). --agent profiles with another
libcilkprof_agent.so (CILKPROF_AGENT), e.g. one built before a change.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PERF = ["perf", "record", "-q", "-e", "cpu-clock", "-g", "-F", "1000"]


def run(cmd, env=None, check=True):
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return proc


def short(name):
    """One spelling for both tools: no parameter list, no namespace noise, no marker."""
    name = name.replace(" (inline)", "").replace("(anonymous namespace)::", "")
    name = re.sub(r"@plt$|@@?GLIBC_[\d.]+$", "", name)
    name = name.lstrip("_")  # DWARF's __pow is the symbol table's pow@@GLIBC_2.29
    name = re.sub(r"\s+const$", "", name)
    # Drop the trailing parameter list (lambdas keep their enclosing signature); perf
    # prints a lambda's call operator as operator(), DWARF as operator()() const.
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        if name[i] == ")":
            depth += 1
        elif name[i] == "(":
            depth -= 1
            if depth == 0:
                name = name[:i] if name.endswith(")") else name
                break
    return re.sub(r"operator\(\)$", "operator", name)


def module_name(path):
    base = os.path.basename(path)
    return re.sub(r"\.so(\.\d+)*$", ".so", base)


class CilkprofShares:
    """Shares of one cilkprof profile (flat view, inline frames folded)."""

    def __init__(self, cilkprof, profile):
        view = json.loads(run([cilkprof, "view", "flat", "--format", "json", "--inline", "fold",
                               profile]).stdout)
        metrics = view["metrics"]
        self.work = metrics["work"]["inclusive"]
        self.overhead = metrics["overhead"]["inclusive"]
        self.total = self.work + self.overhead
        self.functions, self.inclusive, self.modules = {}, {}, {}
        for module in view.get("children", []):
            name = module_name(module["name"])
            self.modules[name] = self.modules.get(name, 0) + self._own(module)
            for source in module.get("children", []):
                for function in source.get("children", []):
                    key = short(function["name"])
                    self.functions[key] = self.functions.get(key, 0) + self._own(function)
                    self.inclusive[key] = self.inclusive.get(key, 0) + self._all(function)

    @staticmethod
    def _own(node):
        m = node["metrics"]
        return m["work"]["exclusive"] + m["overhead"]["exclusive"]

    @staticmethod
    def _all(node):
        m = node["metrics"]
        return m["work"]["inclusive"] + m["overhead"]["inclusive"]

    def share(self, table, key):
        return 100 * table.get(key, 0) / self.total if self.total else 0


class PerfShares:
    """Shares of one perf.data (percentages of all samples, kernel ones included)."""

    def __init__(self, data):
        def report(*args):
            out = run(["perf", "report", "-i", data, "--stdio", "-g", "none", *args]).stdout
            return [l for l in out.splitlines() if l.strip() and not l.startswith("#")]

        self.functions, self.inclusive, self.modules = {}, {}, {}
        for line in report("--no-children", "--sort", "sym"):
            m = re.match(r"\s*([\d.]+)%\s+\[[.k]\]\s+(.*\S)", line)
            if m:
                key = short(m.group(2))
                self.functions[key] = self.functions.get(key, 0) + float(m.group(1))
        for line in report("--children", "--sort", "sym"):
            m = re.match(r"\s*([\d.]+)%\s+[\d.]+%\s+\[[.k]\]\s+(.*\S)", line)
            if m:
                key = short(m.group(2))
                self.inclusive[key] = max(self.inclusive.get(key, 0), float(m.group(1)))
        for line in report("--no-children", "--sort", "dso"):
            m = re.match(r"\s*([\d.]+)%\s+(.*\S)", line)
            if m:
                name = module_name(m.group(2))
                self.modules[name] = self.modules.get(name, 0) + float(m.group(1))

    def share(self, table, key):
        return table.get(key, 0)


def truth_of(proc):
    """The program's own measurement of its reacting function, in percent of its CPU."""
    m = re.search(r"truth tbb_heavy [\d.]+ s of [\d.]+ s CPU: ([\d.]+)%", proc.stderr)
    if m:
        return float(m.group(1))
    after = re.search(r"^cpu_after (\d+)$", proc.stdout, re.M)
    total = re.search(r"^cpu_total (\d+)$", proc.stdout, re.M)
    if after and total:
        return 100 * int(after.group(1)) / int(total.group(1))
    return None


def spread(values):
    if not values:
        return "-"
    med = statistics.median(values)
    return f"{med:5.1f} ({min(values):.1f}-{max(values):.1f})"


def build_tbb_mix(work):
    exe = os.path.join(work, "tbb_mix")
    run(["g++", "-O2", "-g", "-fno-omit-frame-pointer", os.path.join(HERE, "tbb_mix.cpp"), "-o", exe,
         "-ltbb"])
    return exe


def measure(name, argv, args, bin_dir, work, env):
    cilkprof = os.path.join(bin_dir, "cilkprof")
    runner = [os.path.join(bin_dir, "cilkprof-run"), "-q", "-f", "--no-workspan"]
    ours, theirs, truths = [], [], {"cilkprof": [], "perf": []}
    for r in range(args.runs):
        profile = os.path.join(work, f"{name}.{r}.cilkprof")
        proc = run(runner + ["-o", profile, "--"] + argv, env=env)
        truths["cilkprof"].append(truth_of(proc))
        ours.append(CilkprofShares(cilkprof, profile))
        data = os.path.join(work, f"{name}.{r}.data")
        proc = run(PERF + ["-o", data, "--"] + argv, env=env)
        truths["perf"].append(truth_of(proc))
        theirs.append(PerfShares(data))
    return ours, theirs, truths


def print_table(name, argv, ours, theirs, truths, top, measured):
    print(f"\n### {name}: `{' '.join(os.path.basename(a) if i == 0 else a for i, a in enumerate(argv))}`\n")
    print("| share (%) | program's own measurement | cilkprof | perf cpu-clock |")
    print("|---|---|---|---|")

    def row(label, table, key, truth=""):
        a = [o.share(getattr(o, table), key) for o in ours]
        b = [t.share(getattr(t, table), key) for t in theirs]
        print(f"| {label} | {truth} | {spread(a)} | {spread(b)} |")

    if measured and any(t is not None for t in truths["cilkprof"]):
        mine = [t for t in truths["cilkprof"] if t is not None]
        perfs = [t for t in truths["perf"] if t is not None]
        row(f"`{measured}`, inclusive", "inclusive", measured,
            f"{spread(mine)} under cilkprof, {spread(perfs)} under perf")
    ranked = {}
    for t in theirs:
        for key, value in t.functions.items():
            ranked[key] = ranked.get(key, 0) + value
    for key in sorted(ranked, key=ranked.get, reverse=True)[:top]:
        row(f"`{key}`", "functions", key)
    modules = {}
    for t in theirs:
        for key, value in t.modules.items():
            modules[key] = modules.get(key, 0) + value
    for key in sorted(modules, key=modules.get, reverse=True)[:4]:
        row(f"module {key}", "modules", key)
    overhead = [100 * o.overhead / o.total if o.total else 0 for o in ours]
    if max(overhead, default=0) > 0:
        print(f"| cilkprof's overhead metric (runtime work at spawn and sync sites) |  | {spread(overhead)} | - |")
    samples = statistics.median(o.total for o in ours) / 1e9
    print(f"\ncilkprof's median total: {samples:.2f} s of sampled CPU time.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build/default", help="build directory (bin/ has cilkprof)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--top", type=int, default=6, help="functions per table")
    parser.add_argument("--contend", action="store_true", help="a competing busy process on the last CPU")
    parser.add_argument("--agent", help="the libcilkprof_agent.so to profile with")
    parser.add_argument("--programs", default="tbb_mix,fib,nqueens")
    args = parser.parse_args()
    bin_dir = os.path.join(os.path.abspath(args.build), "bin")
    env = dict(os.environ)
    if args.agent:
        env["CILKPROF_AGENT"] = os.path.abspath(args.agent)
    work = tempfile.mkdtemp(prefix="cilkprof-shares-")
    # name: (command line, the function the program measures itself, or None)
    programs = {
        "tbb_mix": (lambda: [build_tbb_mix(work), "2000", "20000"], "tbb_heavy"),
        "fib": (lambda: [os.path.join(bin_dir, "fib"), "38"], None),
        "nqueens": (lambda: [os.path.join(bin_dir, "nqueens"), "15"], None),
        # The agent's regression test program (tests/agent/sampling_program.cc): a
        # function run for 500 us after every interruption of the thread.
        "after_interruption": (lambda: [os.path.join(bin_dir, "agent_sampling_program"),
                                        "after-interruption"], "after_interruption"),
    }
    hog = None
    if args.contend:
        cpus = sorted(os.sched_getaffinity(0))
        hog = subprocess.Popen(["taskset", "-c", str(cpus[-1]), "sh", "-c", "while :; do :; done"])
    try:
        print(f"Runs per program and tool: {args.runs}, alternating; "
              f"{'one competing busy process on the last CPU' if hog else 'no competing load of our own'}; "
              f"agent: {args.agent or 'the build`s'}.")
        for name in args.programs.split(","):
            command, measured = programs[name]
            argv = command()
            ours, theirs, truths = measure(name, argv, args, bin_dir, work, env)
            print_table(name, argv, ours, theirs, truths, args.top, measured)
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    print(f"\nProfiles and perf data: {work}")


if __name__ == "__main__":
    main()
