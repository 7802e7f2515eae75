#!/usr/bin/env python3
"""The costs of attaching to a running process (issue 15; docs/PERFORMANCE.md, "Attach").

    bench/attach/run.py BUILD_DIR [--parts standby,service,stall,attached] [--runs N]
                        [--workers P] [--load-duration D] [--rate HZ] [example[:arg,arg] ...]

Four parts, each run side by side with its baseline, alternating (the order rotates
from round to round) so the shared machine's slow phases hit every mode alike:

standby   The bundled examples with no agent vs with the agent preloaded in standby
          (LD_PRELOAD=BUILD_DIR/lib/libcilkprof_agent.so CILKPROF_STANDBY=1, what
          `cilkprof run --standby` and a service unit set). Medians of the program's
          own `time:` line (the computation), of the whole process's wall time and of
          its CPU time (user + system: not stretched by waiting for a CPU, so the
          quietest figure on a busy machine, best with --workers 1), the ratio per
          example, the median of the per-round ratios (paired), their geometric means,
          and each mode's spread ((max - min) / median of `time:`). Target: at most 1.005.
service   The example service (cilk_service, CILK_NWORKERS workers) under
          cilk_service_load for --load-duration, with no agent vs in standby:
          throughput (requests/s) and overall p50/p99 latency, medians.
stall     The longest stall the target sees during an injection: bench_attach_heartbeat
          (no agent; a 1 ms heartbeat thread, main blocked in read) is attached with a
          real `cilkprof attach PID --duration 1s`; its largest heartbeat gap over the
          window from just before the attach starts to just after it returns. The same
          gap in a second, never attached heartbeat process over a window of the same
          length is the machine's own noise floor. Also the injector's own longest stop
          ("stopped for at most X ms" on cilkprof attach's stderr) and the attach
          command's wall time. Target: under 50 ms.
attached  The service under load four ways: no agent; standby; standby and attached
          (`cilkprof attach PID --no-workspan -F 1000` for the whole load, stopped with
          SIGINT after it); under `cilkprof run --workspan=off -F 1000`. Throughput
          medians; the cost of each mode is the time per request over no agent's, and
          attached / run compares the two costs at the same rate.

The load average is printed with each part: quote it with the figures.
"""
import argparse
import math
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time

DEFAULT_EXAMPLES = ["fib", "nqueens", "cilksort", "matmul", "rectmul", "strassen", "heat", "fft", "knapsack", "lu",
                    "cholesky"]


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def spread(xs):
    """(max - min) / median, in percent: how far apart the runs of one mode were."""
    return 100.0 * (max(xs) - min(xs)) / statistics.median(xs)


def load():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def rotations(modes, runs):
    for r in range(runs):
        k = r % len(modes)
        yield modes[k:] + modes[:k]


class Build:
    def __init__(self, build_dir, workers):
        self.bin = os.path.join(build_dir, "bin")
        self.agent = os.path.abspath(os.path.join(build_dir, "lib", "libcilkprof_agent.so"))
        self.cilkprof = os.path.join(self.bin, "cilkprof")
        # The agent and the runtime see only what we set: no collector socket inherited.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("CILKPROF_") and k != "LD_PRELOAD"}
        self.env["CILK_NWORKERS"] = str(workers)
        self.env["CILKPROF_AGENT"] = self.agent
        self.standby_env = dict(self.env, LD_PRELOAD=self.agent, CILKPROF_STANDBY="1")

    def path(self, name):
        p = os.path.join(self.bin, name)
        if not os.access(p, os.X_OK):
            sys.exit(f"{p} not found: build cilkprof, cilkprof_agent, cilk_service, cilk_service_load, "
                     f"bench_attach_heartbeat and the examples first")
        return p


def control_dir():
    return f"/tmp/cilkprof-{os.geteuid()}"


def control_sockets():
    try:
        return {f for f in os.listdir(control_dir()) if f.startswith("agent-")}
    except FileNotFoundError:
        return set()


# ---------------------------------------------------------------------------- standby

def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_run(cmd, env):
    """The program's `time:`, its wall time and its CPU time (user + system, all threads:
    unlike the other two, not stretched by waiting for a CPU the other processes hold)."""
    cpu = children_cpu()
    start = time.monotonic()
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    cpu = children_cpu() - cpu
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed with {out.returncode}:\n{out.stderr}")
    m = re.search(r"^time:\s*([0-9.eE+-]+)", out.stdout, re.M)
    if not m:
        sys.exit(f"{' '.join(cmd)} printed no 'time:' line")
    return float(m.group(1)), wall, cpu, out.stderr


def part_standby(b, a):
    print(f"== standby: the examples with no agent vs the agent in standby, {a.workers} workers, {a.runs} "
          f"alternating runs each (load {load()})", flush=True)
    before = control_sockets()
    rows = []
    agent_stderr = set()
    for spec in a.examples:
        name, _, args = spec.partition(":")
        cmd = [b.path(name)] + (args.split(",") if args else [])
        runs = {"none": [], "standby": []}  # (time, wall, cpu) per run
        for order in rotations(["none", "standby"], a.runs):
            for mode in order:
                compute, wall, cpu, err = timed_run(cmd, b.env if mode == "none" else b.standby_env)
                runs[mode].append((compute, wall, cpu))
                if mode == "standby" and err.strip():
                    agent_stderr.add(err.strip())
        med = {m: [statistics.median(r[i] for r in runs[m]) for i in range(3)] for m in runs}
        ratio = [med["standby"][i] / med["none"][i] for i in range(3)]
        # Each round's standby run over the same round's no-agent run: drifts slower than
        # a round cancel out.
        paired = statistics.median(s[0] / n[0] for s, n in zip(runs["standby"], runs["none"]))
        sp = {m: spread([r[0] for r in runs[m]]) for m in runs}
        load1 = os.getloadavg()[0]
        rows.append((spec, med, ratio, paired, sp, load1))
        print(f"{spec:12s} time none {med['none'][0]:.4f} s standby {med['standby'][0]:.4f} s ratio {ratio[0]:.4f} "
              f"(paired {paired:.4f}; spread {sp['none']:.1f}% / {sp['standby']:.1f}%)  wall {ratio[1]:.4f}  "
              f"cpu {ratio[2]:.4f}  load {load1:.2f}", flush=True)
    print()
    print("| example | no agent, time (s) | standby, time (s) | standby / none | paired rounds | spread none "
          "| spread standby | wall ratio | CPU time ratio | load |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for spec, med, ratio, paired, sp, load1 in rows:
        print(f"| {spec} | {med['none'][0]:.4f} | {med['standby'][0]:.4f} | {ratio[0]:.4f} | {paired:.4f} | "
              f"{sp['none']:.1f}% | {sp['standby']:.1f}% | {ratio[1]:.4f} | {ratio[2]:.4f} | {load1:.1f} |")
    print(f"| geometric mean ({len(rows)}) | | | {geo([r[2][0] for r in rows]):.4f} | {geo([r[3] for r in rows]):.4f} "
          f"| | | {geo([r[2][1] for r in rows]):.4f} | {geo([r[2][2] for r in rows]):.4f} | |")
    left = control_sockets() - before
    print(f"control sockets left in {control_dir()} by the standby runs: {len(left)}")
    for e in sorted(agent_stderr):
        print(f"the agent in standby printed: {e}")
    print(f"load average at end: {load()}\n", flush=True)


# ---------------------------------------------------------------------------- service

def wait_for(predicate, what, timeout=20.0):
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            sys.exit(f"timed out waiting for {what}")
        time.sleep(0.02)


class Service:
    """cilk_service in one of the modes; `load()` runs cilk_service_load against it and stops it."""

    def __init__(self, b, a, tmp, mode):
        self.b, self.a, self.mode = b, a, mode
        self.socket = os.path.join(tmp, "service.sock")
        if os.path.exists(self.socket):
            os.unlink(self.socket)
        service = [b.path("cilk_service"), "--socket", self.socket, "--log-every", "0"]
        if mode == "run":
            cmd = [b.cilkprof, "run", "-q", "-f", "--workspan=off", "-F", str(a.rate), "-o",
                   os.path.join(tmp, "run.cilkprof"), "--"] + service
            env = b.env
        else:
            cmd, env = service, (b.env if mode == "none" else b.standby_env)
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: os.path.exists(self.socket) or self.proc.poll() is not None, "the service's socket")
        if self.proc.poll() is not None:
            sys.exit(f"{' '.join(cmd)} exited with {self.proc.returncode}:\n{self.proc.stderr.read()}")
        self.attach = None
        if mode == "attached":
            pid = self.proc.pid
            self.attach = subprocess.Popen(
                [b.cilkprof, "attach", str(pid), "--no-workspan", "-F", str(a.rate), "-f", "-o",
                 os.path.join(tmp, "attach.cilkprof")], env=b.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                text=True)
            for line in self.attach.stderr:  # the load starts once the window is open
                if "cilkprof: profiling process" in line:
                    break
            else:
                sys.exit(f"cilkprof attach {pid} ended without opening a window (exit {self.attach.wait()})")

    def load(self):
        out = subprocess.run([self.b.path("cilk_service_load"), "--socket", self.socket, "--duration",
                              self.a.load_duration], env=self.b.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        if self.attach is not None:
            self.attach.send_signal(signal.SIGINT)
            rest = self.attach.stderr.read()
            self.attach.wait()
            if "detached from process" not in rest:
                sys.exit(f"cilkprof attach did not detach cleanly:\n{rest}")
        quit_ = subprocess.run([self.b.path("cilk_service_load"), "--socket", self.socket, "--count", "1", "--quit"],
                               env=self.b.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.proc.wait(timeout=60)
        if out.returncode != 0 or quit_.returncode != 0:
            sys.exit(f"cilk_service_load failed ({self.mode}):\n{out.stdout}{out.stderr}{quit_.stderr}")
        thr = float(re.search(r"([0-9.]+) requests/s", out.stdout).group(1))
        m = re.search(r"^\s+all\s+\d+\s+([0-9.]+)\s+[0-9.]+\s+([0-9.]+)", out.stdout, re.M)
        return thr, float(m.group(1)), float(m.group(2))


def service_rounds(b, a, modes, title):
    print(f"== {title}: cilk_service under cilk_service_load --duration {a.load_duration} (default mix, 1 "
          f"connection), {a.workers} workers, {a.runs} alternating runs each (load {load()})", flush=True)
    res = {m: [] for m in modes}
    with tempfile.TemporaryDirectory(prefix="cilkprof-attach-bench-") as tmp:
        for order in rotations(modes, a.runs):
            for mode in order:
                res[mode].append(Service(b, a, tmp, mode).load())
                print(f"  {mode:9s} {res[mode][-1][0]:8.1f} requests/s", flush=True)
    med = {m: tuple(statistics.median(r[i] for r in res[m]) for i in range(3)) for m in modes}
    print()
    print("| mode | requests/s (median) | spread | time per request / none | p50 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for m in modes:
        print(f"| {m} | {med[m][0]:.1f} | {spread([r[0] for r in res[m]]):.1f}% | {med['none'][0] / med[m][0]:.4f} "
              f"| {med[m][1]:.3f} | {med[m][2]:.3f} |")
    print(f"load average at end: {load()}\n", flush=True)
    return med


def part_service(b, a):
    service_rounds(b, a, ["none", "standby"], "service, standby")


def part_attached(b, a):
    med = service_rounds(b, a, ["none", "standby", "attached", "run"],
                         f"attached vs cilkprof run at {a.rate} Hz, no work/span")
    cost = {m: med["none"][0] / med[m][0] - 1 for m in med}
    print(f"cost over no agent (time per request): attached {100 * cost['attached']:+.1f}%, "
          f"run {100 * cost['run']:+.1f}%; attached / run time per request "
          f"{med['run'][0] / med['attached'][0]:.4f}\n", flush=True)


# ---------------------------------------------------------------------------- stall

class Heartbeat:
    def __init__(self, b):
        self.proc = subprocess.Popen([b.path("bench_attach_heartbeat")], env=b.env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            sys.exit("bench_attach_heartbeat did not start")
        time.sleep(0.3)  # past start-up
        self.mark()

    def mark(self):
        self.proc.stdin.write("mark\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline().split()[1])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def part_stall(b, a):
    print(f"== stall: cilkprof attach PID --duration 1s into bench_attach_heartbeat (no agent), "
          f"{a.runs} runs, each beside a never attached heartbeat over the same window (load {load()})", flush=True)
    gaps, floors, stops, walls = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="cilkprof-attach-bench-") as tmp:
        for r in range(a.runs):
            for which in (("attach", "floor") if r % 2 == 0 else ("floor", "attach")):
                hb = Heartbeat(b)
                if which == "attach":
                    start = time.monotonic()
                    out = subprocess.run([b.cilkprof, "attach", str(hb.proc.pid), "--duration", "1s", "-f", "-o",
                                          os.path.join(tmp, "hb.cilkprof")], env=b.env, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE, text=True)
                    walls.append(time.monotonic() - start)
                    gaps.append(hb.mark())
                    m = re.search(r"stopped for at most ([0-9.]+) ms", out.stderr)
                    if out.returncode != 0 or not m:
                        sys.exit(f"cilkprof attach {hb.proc.pid} failed ({out.returncode}):\n{out.stderr}")
                    stops.append(float(m.group(1)))
                else:
                    time.sleep(walls[-1] if walls else 1.2)
                    floors.append(hb.mark())
                hb.close()
            print(f"  run {r + 1}: gap during attach {gaps[-1]:.3f} ms, injector's longest stop {stops[-1]:.1f} ms, "
                  f"attach {walls[-1]:.2f} s; never attached: {floors[-1]:.3f} ms", flush=True)
    print()
    print("| | median | max | all runs |")
    print("|---|---:|---:|---|")
    for title, xs, unit in (("largest heartbeat gap, attached (ms)", gaps, 3),
                            ("largest heartbeat gap, never attached (ms)", floors, 3),
                            ("injector's longest stop (ms)", stops, 1),
                            ("cilkprof attach --duration 1s, wall (s)", walls, 2)):
        print(f"| {title} | {statistics.median(xs):.{unit}f} | {max(xs):.{unit}f} | "
              + ", ".join(f"{x:.{unit}f}" for x in xs) + " |")
    print(f"load average at end: {load()}\n", flush=True)


PARTS = {"standby": part_standby, "service": part_service, "stall": part_stall, "attached": part_attached}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_dir")
    ap.add_argument("--parts", default="standby,service,stall,attached", help="comma-separated, among " + ", ".join(PARTS))
    ap.add_argument("--runs", type=int, default=5, help="runs per mode (default 5)")
    ap.add_argument("--workers", type=int, default=2, help="CILK_NWORKERS (default 2)")
    ap.add_argument("--load-duration", default="5s", help="cilk_service_load --duration (default 5s)")
    ap.add_argument("--rate", type=int, default=1000, help="sampling rate of the attached part, Hz (default 1000)")
    ap.add_argument("examples", nargs="*", help="examples of the standby part, optionally name:arg,arg "
                    "(default: " + " ".join(DEFAULT_EXAMPLES) + ", at their default sizes)")
    a = ap.parse_intermixed_args()
    a.examples = a.examples or DEFAULT_EXAMPLES
    parts = [p for p in a.parts.split(",") if p]
    if any(p not in PARTS for p in parts):
        sys.exit(f"--parts {a.parts}: choose among {', '.join(PARTS)}")
    b = Build(a.build_dir, a.workers)
    for f in (b.agent, b.cilkprof):
        if not os.path.exists(f):
            sys.exit(f"{f} not found: build cilkprof and cilkprof_agent in {a.build_dir} first")
    print(f"commit {subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], stdout=subprocess.PIPE, text=True).stdout.strip()}, "
          f"{os.cpu_count()} CPUs, load average at start: {load()}", flush=True)
    for p in parts:
        PARTS[p](b, a)


if __name__ == "__main__":
    main()
