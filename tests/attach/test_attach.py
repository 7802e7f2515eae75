#!/usr/bin/env python3
"""End-to-end tests of `cilkprof attach` (issue 15): standby and injected targets.

Run by CTest (tests/attach/CMakeLists.txt sets CILKPROF_BIN_DIR, CILKPROF_AGENT,
ATTACH_TARGET, ATTACH_STATIC_BLOCKER, CILK_SERVICE, CILK_SERVICE_LOAD). Each TestCase
class is one CTest test and starts its own processes.

Nothing waits on time: the tests synchronise on the target's answers (attach_target.c
answers every stdin line on stdout), on cilkprof's "profiling process" line, on
cilkprofd's files appearing, and poll /proc in bounded loops. Statistical checks use
generous bounds and enough samples.
"""
import glob
import json
import os
import pwd
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

BIN = os.environ.get("CILKPROF_BIN_DIR", "")
CILKPROF = os.path.join(BIN, "cilkprof")
CILKPROFD = os.path.join(BIN, "cilkprofd")
AGENT = os.environ.get("CILKPROF_AGENT", "")
TARGET = os.environ.get("ATTACH_TARGET", "")
STATIC_BLOCKER = os.environ.get("ATTACH_STATIC_BLOCKER", "")
SERVICE = os.environ.get("CILK_SERVICE", "")
SERVICE_LOAD = os.environ.get("CILK_SERVICE_LOAD", "")
TEST_USER = "cilkprof-attach-test"
SKIP_RETURN_CODE = 77
# Bounds on waits (not assertions on time): a hang fails the test instead of the suite.
WAIT = 60

SIGPROF_MASK = 1 << (signal.SIGPROF - 1)  # bit SIGPROF-1 of SigCgt
STANDBY_ENV = {"LD_PRELOAD": AGENT, "CILKPROF_STANDBY": "1"}


def run(cmd, env=None, timeout=WAIT, **kw):
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run(cmd, env=full, capture_output=True, text=True, timeout=timeout, **kw)


def json_of(cmd):
    r = run(cmd)
    if r.returncode != 0:
        raise AssertionError(f"{cmd} exited {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def summary(profile):
    return json_of([CILKPROF, "summary", "--format", "json", profile])


def function_samples(profile):
    """Exclusive samples per function, every context merged (bottom-up, depth 1)."""
    tree = json_of([CILKPROF, "view", "bottom-up", "--metric", "samples", "--depth", "1", "--format", "json",
                    profile])
    out = {}
    for child in tree.get("children", []):
        out[child["name"]] = out.get(child["name"], 0) + child["metrics"]["samples"]["exclusive"]
    return out


def walk(node, depth=0):
    yield depth, node
    for child in node.get("children", []):
        yield from walk(child, depth + 1)


def proc_status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def kb(value):
    return int(value.split()[0])


def fd_links(pid):
    links = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            links.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except FileNotFoundError:
            pass
    return links


def perf_fds(pid):
    return sum(1 for link in fd_links(pid) if link == "anon_inode:[perf_event]")


def posix_timers(pid):
    with open(f"/proc/{pid}/timers") as f:
        return f.read()


class Target:
    """attach_target driven line by line: every command gets its answer before the next."""

    def __init__(self, env=None, wrapper=()):
        full = dict(os.environ)
        full.pop("LD_PRELOAD", None)
        full.pop("CILKPROF_STANDBY", None)
        full.update(env or {})
        self.proc = subprocess.Popen([*wrapper, TARGET], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=full, text=True, bufsize=1)
        self.output = []
        self.pid = self.proc.pid
        if wrapper:
            # `cilkprof run --standby` says which process is the program.
            line = self.proc.stderr.readline()
            m = re.search(r"as process (\d+)", line)
            if not m:
                self.close()
                raise AssertionError(f"cilkprof run --standby said {line!r}")
            self.pid = int(m.group(1))
        self.expect("ready")

    def expect(self, wanted):
        line = self.proc.stdout.readline()
        if not line:
            status = self.proc.wait(timeout=WAIT)
            raise AssertionError(f"the target ended (status {status}) instead of answering {wanted!r}; "
                                 f"stderr: {self.proc.stderr.read()[-2000:]}")
        self.output.append(line)
        if not line.startswith(wanted):
            raise AssertionError(f"the target answered {line!r}, expected {wanted!r}")
        return line

    def send(self, command, answer=None):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        # The first read's byte count comes before the first answer.
        if len(self.output) == 1:
            self.expect("first read")
        return self.expect(answer if answer is not None else command.split()[0])

    def quit(self):
        self.send("quit", "bye")
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        self.output.append(rest)
        return self.proc.wait(timeout=WAIT)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=WAIT)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f:
                f.close()


def unprofiled_output(commands):
    target = Target()
    try:
        for command in commands:
            target.send(command)
        status = target.quit()
        assert status == 0, status
        return "".join(target.output)
    finally:
        target.close()


class Attach:
    """`cilkprof attach` running in the background; started() waits for its window to open."""

    def __init__(self, pid, *args, env=None):
        full = dict(os.environ)
        full.update(env or {})
        self.proc = subprocess.Popen([CILKPROF, "attach", str(pid), *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=full)
        self.stderr = []

    def started(self):
        """Reads stderr until 'profiling process' (True) or cilkprof ends (False)."""
        for line in self.proc.stderr:
            self.stderr.append(line)
            if line.startswith("cilkprof: profiling process"):
                return True
        return False

    def finish(self, timeout=WAIT):
        out, err = self.proc.communicate(timeout=timeout)
        self.stderr.append(err)
        return self.proc.returncode, out, "".join(self.stderr)


def wait_until(predicate, what, tries=2000):
    """Bounded polling (2000 x 5 ms at most) for something another process does."""
    for _ in range(tries):
        if predicate():
            return
        time.sleep(0.005)
    raise AssertionError("timed out waiting for " + what)


class Workdir(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cilkprof-attach-")
        self.dir = self.tmp.name
        self.addCleanup(self.tmp.cleanup)

    def path(self, name):
        return os.path.join(self.dir, name)


class CyclesMixin:
    """Ten attach/detach cycles; the target must not notice them."""
    CYCLES = 10
    # While attached; the phase thread spins in hot_a across the detach, so the detach
    # happens while a thread is busy (a sample signal may be pending on it then).
    WORK = ["phase a", "work 20", "work 20", "work 20"]
    BUSY = "work 60"  # after each detach, ~100 ms busy with SIGPROF at its default action

    def start_target(self):
        raise NotImplementedError

    def test_ten_cycles(self):
        commands = []
        target = self.start_target()
        self.addCleanup(target.close)
        pid = target.pid
        baseline_caught = int(proc_status(pid)["SigCgt"], 16)
        self.assertFalse(baseline_caught & SIGPROF_MASK, "the target catches SIGPROF before any attach")
        samples = 0
        per_cycle = []
        for cycle in range(1, self.CYCLES + 1):
            profile = self.path(f"cycle{cycle}.cilkprof")
            attach = Attach(pid, "--duration", "300ms", "-o", profile)
            self.assertTrue(attach.started(), f"cycle {cycle}: {''.join(attach.stderr)}")
            for command in self.WORK:
                target.send(command)
                commands.append(command)
            status, _, err = attach.finish()
            self.assertEqual(status, 0, f"cycle {cycle}: {err}")
            self.assertIn(f"detached from process {pid}", err)
            target.send("phase stop", "phase stopped")
            commands.append("phase stop")
            samples += summary(profile)["samples"]

            # No profiling signal after the detach: no POSIX timer, no SIGPROF handler in
            # the kernel's view, and perf_event descriptors (kept, disabled, until the next
            # attach replaces them) do not pile up.
            self.assertEqual(posix_timers(pid), "", f"cycle {cycle}: timers left armed")
            caught = int(proc_status(pid)["SigCgt"], 16)
            self.assertFalse(caught & SIGPROF_MASK, f"cycle {cycle}: SIGPROF still caught (SigCgt {caught:x})")
            # Busy with SIGPROF at its default action: one more profiling signal kills it
            # (Target.send then reports the exit by signal).
            target.send(self.BUSY)
            target.send("sigstate", "sigstate sigprof default unblocked")
            commands += [self.BUSY, "sigstate"]
            # The agent's control thread closes the control connection just after its
            # DETACHED reply: wait for that instead of racing it.
            if per_cycle:
                wait_until(lambda: len(fd_links(pid)) <= per_cycle[-1]["fds"],
                           f"cycle {cycle}: descriptors back to {per_cycle[-1]['fds']}")
            st = proc_status(pid)
            per_cycle.append({"fds": len(fd_links(pid)), "perf": perf_fds(pid), "rss": kb(st["VmRSS"]),
                              "vm": kb(st["VmSize"])})
        print(f"cycles: {per_cycle}; {samples} samples in all", file=sys.stderr)
        self.assertGreater(samples, 0, "ten windows, no sample")
        # From cycle 2 on the descriptors stay exactly the same; memory may move by a small
        # fixed amount (allocator arenas) but must not grow with the cycles.
        for cycle, figures in enumerate(per_cycle[2:], start=3):
            self.assertLessEqual(figures["fds"], per_cycle[1]["fds"], f"cycle {cycle}: descriptors grew")
            self.assertLessEqual(figures["perf"], per_cycle[1]["perf"], f"cycle {cycle}: perf_event descriptors grew")
        third, tenth = per_cycle[2], per_cycle[9]
        self.assertLessEqual(tenth["rss"] - third["rss"], 1024, f"RSS grew from cycle 3 to 10: {per_cycle}")
        self.assertLessEqual(tenth["vm"] - third["vm"], 2048, f"VmSize grew from cycle 3 to 10: {per_cycle}")
        self.assertEqual(target.quit(), 0)
        self.assertEqual("".join(target.output), unprofiled_output(commands),
                         "the output differs from an unprofiled run with the same input")


class StandbyCyclesTest(CyclesMixin, Workdir):
    def start_target(self):
        return Target(wrapper=(CILKPROF, "run", "--standby", "--"))


class InjectedCyclesTest(CyclesMixin, Workdir):
    def start_target(self):
        target = Target()
        self.assertNotIn(AGENT, open(f"/proc/{target.pid}/maps").read())
        return target


class WindowTest(Workdir):
    """A window holds what ran in it: hot_a in a first window, hot_b in the second."""

    def window(self, target, command, profile):
        """Attaches until `command` (a known amount of CPU work) is done, then detaches
        with Ctrl-C: the samples do not depend on how loaded the machine is."""
        attach = Attach(target.pid, "-o", profile)
        self.assertTrue(attach.started(), "".join(attach.stderr))
        target.send(command)
        attach.proc.send_signal(signal.SIGINT)
        code, _, err = attach.finish()
        self.assertIn(code, (0, -signal.SIGINT), err)
        self.assertIn("detached from process", err)
        return function_samples(profile)

    def test_window_has_only_what_ran_in_it(self):
        target = Target(env=STANDBY_ENV)
        self.addCleanup(target.close)
        # A first window while hot_a runs (about 0.6 s of CPU): the agent's shadows now
        # hold hot_a's samples, and the next window must not report them again.
        in_a = self.window(target, "work 400", self.path("a.cilkprof"))
        self.assertGreater(in_a.get("hot_a", 0), 100, in_a)
        self.assertLess(in_a.get("hot_b", 0), 0.01 * sum(in_a.values()), in_a)
        in_b = self.window(target, "work-b 400", self.path("b.cilkprof"))
        total = sum(in_b.values())
        print(f"first window: {in_a}; second: {in_b}", file=sys.stderr)
        self.assertGreater(in_b.get("hot_b", 0), 200, in_b)
        self.assertLess(in_b.get("hot_a", 0), 0.01 * total, f"hot_a in a window where only hot_b ran: {in_b}")
        self.assertEqual(target.quit(), 0)


class BlockedReadTest(Workdir):
    """Injection while the only thread is blocked in read(): the read goes on unharmed."""

    def test_injection_into_blocked_read(self):
        commands = ["work 30"]
        target = Target()
        self.addCleanup(target.close)
        # main is in read() now ("ready" is its last word before it): wait until the
        # kernel says so, then inject.
        def in_read():
            with open(f"/proc/{target.pid}/syscall") as f:
                return f.read().startswith("0 0x0 ")  # read(0, ...) on x86-64
        wait_until(in_read, "the target to block in read(0, ...)")
        profile = self.path("blocked.cilkprof")
        attach = Attach(target.pid, "--duration", "1s", "-o", profile)
        self.assertTrue(attach.started(), "".join(attach.stderr))
        self.assertIn("loaded the agent into process", "".join(attach.stderr))
        for command in commands:
            target.send(command)  # the first read() returns this line, not EINTR
        status, _, err = attach.finish()
        self.assertEqual(status, 0, err)
        self.assertGreater(function_samples(profile).get("hot_a", 0), 0)
        # Only after the detach: while attached, an injected agent's handler is visible
        # to the program's sigaction (nothing interposes on it; docs/INJECTION.md).
        target.send("sigstate", "sigstate sigprof default unblocked")
        commands.append("sigstate")
        self.assertEqual(target.quit(), 0)
        self.assertEqual("".join(target.output), unprofiled_output(commands))


class CilkService:
    """cilk_service on two workers, started without the agent, with a load generator."""

    def __init__(self, directory, env=None, load=True):
        full = dict(os.environ, CILK_NWORKERS="2")
        for name in ("LD_PRELOAD", "CILKPROF_STANDBY", "CILK_FORCE_STEAL"):
            full.pop(name, None)
        full.update(env or {})
        self.socket = os.path.join(directory, "service.sock")
        self.proc = subprocess.Popen([SERVICE, "--socket", self.socket, "--log-every", "0"], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=full)
        first = self.proc.stderr.readline()
        if "listening on" not in first:
            self.close()
            raise AssertionError(f"cilk_service did not start: {first!r}")
        self.load = None
        if load:
            self.load = subprocess.Popen([SERVICE_LOAD, "--socket", self.socket, "--mix", "fib:1", "--fib", "27",
                                          "--duration", "10m"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         text=True)

    def stop(self):
        """Ends the load, checks the service still answers right, ends the service;
        returns (the check's output, the service's exit status)."""
        if self.load is not None:
            self.load.kill()
            self.load.wait(timeout=WAIT)
        check = subprocess.run([SERVICE_LOAD, "--socket", self.socket, "--mix", "fib:1,sort:1,nqueens:1",
                                "--count", "30"], capture_output=True, text=True, timeout=WAIT)
        self.proc.send_signal(signal.SIGTERM)
        return check.stdout + check.stderr, self.proc.wait(timeout=WAIT)

    def close(self):
        for p in (self.load, self.proc):
            if p is None:
                continue
            if p.poll() is None:
                p.kill()
            p.wait(timeout=WAIT)
        self.proc.stderr.close()


# libcilk's own functions: with complete logical paths none is a row of the profile
# (samples in them are charged to the user's spawn or sync site).
RUNTIME_FRAME = re.compile(r"cilk_spawn_shim|cilk_invoke_child|cilk::rt::|SchedulerLoop|WorkerThreadMain|"
                           r"fcontext|start_thread|clone3?$")


class CilkRuntimeTest(Workdir):
    """Injection into a process on the Cilk runtime with two workers: paths complete."""

    def test_logical_paths_complete_after_injection(self):
        service = CilkService(self.dir, load=False)
        self.addCleanup(service.close)
        # The runtime runs before the injection, as in a service that has been serving:
        # its start-up (before the tool attaches) is not part of the window.
        warm = subprocess.run([SERVICE_LOAD, "--socket", service.socket, "--mix", "fib:1", "--fib", "20",
                               "--count", "2"], capture_output=True, text=True, timeout=WAIT)
        self.assertIn("2 correct, 0 wrong", warm.stdout + warm.stderr)
        profile = self.path("service.cilkprof")
        # The window lasts a fixed amount of work (100 fib 27 requests, several seconds of
        # CPU under the agent): enough samples at 200 us however loaded the machine is.
        attach = Attach(service.proc.pid, "--period", "200us", "--unwind", "dwarf", "-o", profile)
        self.assertTrue(attach.started(), "".join(attach.stderr))
        work = subprocess.run([SERVICE_LOAD, "--socket", service.socket, "--mix", "fib:1", "--fib", "27",
                               "--count", "100"], capture_output=True, text=True, timeout=WAIT)
        self.assertIn("100 correct, 0 wrong", work.stdout + work.stderr)
        attach.proc.send_signal(signal.SIGINT)
        code, _, err = attach.finish()
        self.assertIn(code, (0, -signal.SIGINT), err)
        load_out, status = service.stop()
        self.assertIn("30 correct, 0 wrong", load_out)
        self.assertEqual(status, 0, "the service did not end normally after the detach")

        # tests/logical/check_example_blame.py's criteria: >= 1500 samples, <= 0.1% partial.
        s = summary(profile)
        print(f"{s['samples']} samples, {s['partial_unwinds']} partial", file=sys.stderr)
        self.assertGreaterEqual(s["samples"], 1500)
        self.assertLessEqual(s["partial_unwinds"], 0.001 * s["samples"])
        tree = json_of([CILKPROF, "view", "top-down", "--format", "json", profile])
        # Every sample on the logical path from main, within the same 0.1%: a worker's
        # overhead sample in its scheduling loop, between strands, has no logical context
        # and stays under its thread's own root (clone3), as under cilkprof run.
        off_path = sum(c["metrics"]["samples"]["inclusive"] for c in tree.get("children", [])
                       if c["name"] != "_start")
        self.assertLessEqual(off_path, 0.001 * s["samples"],
                             "a worker's samples are not grafted onto the logical path")
        on_path = [c for c in tree.get("children", []) if c["name"] == "_start"]
        runtime_rows = sorted({n["name"] for root in on_path for _, n in walk(root)
                               if RUNTIME_FRAME.search(n["name"]) or "libcilk" in n.get("module", "")})
        self.assertEqual(runtime_rows, [], "runtime frames shown as rows of the user's code")
        fib_rows = [n for _, n in walk(tree) if "fib_parallel" in n["name"]]
        self.assertTrue(fib_rows, "fib_parallel is not in the profile")
        # Work and span of the computations that began in the window (late attach of the
        # work/span hooks: docs/RUNTIME.md): the requests run one computation each.
        self.assertEqual(s.get("workspan_run"), "same")
        self.assertGreater(s.get("spawns", 0), 0)
        self.assertGreater(s.get("span", 0), 0)
        self.assertGreaterEqual(s.get("work", 0), s.get("span", 0))


class KillDuringAttachTest(Workdir):
    """SIGKILL to the target while `cilkprof attach --duration 30s` runs."""

    def check_kill(self, target):
        profile = self.path("killed.cilkprof")
        target.send("phase a")
        attach = Attach(target.pid, "--duration", "30s", "-o", profile)
        self.assertTrue(attach.started(), "".join(attach.stderr))
        # Killed and left unreaped while cilkprof notices: the zombie must count as ended.
        target.proc.kill()
        # Bounded: far below the 30 s duration, so a cilkprof that waited it out fails.
        status, _, err = attach.finish(timeout=20)
        self.assertEqual(target.proc.wait(timeout=WAIT), -signal.SIGKILL)
        print(f"cilkprof attach after SIGKILL: status {status}\n{err}", file=sys.stderr)
        # Observed: the agent's end shows as the control connection closing; cilkprof says
        # the process ended and writes what it received (exit 0), or says no profile was
        # written (exit 1) when nothing arrived.
        # It says the process ended (a zombie not yet reaped by its parent has ended too),
        # not that the agent lost its connection.
        self.assertRegex(err, rf"(^|: )process {target.pid} ended after [0-9.]+ s")
        self.assertNotIn("lost its connection", err)
        if status == 0:
            self.assertTrue(os.path.exists(profile))
            self.assertGreaterEqual(summary(profile)["samples"], 0)
        else:
            self.assertEqual(status, 1)
            self.assertIn("no profile was written", err)

    def test_kill_standby_target(self):
        target = Target(env=STANDBY_ENV)
        self.addCleanup(target.close)
        self.check_kill(target)

    def test_kill_injected_target(self):
        target = Target()
        self.addCleanup(target.close)
        self.check_kill(target)


class AttachTwiceTest(Workdir):
    def test_second_attach_is_refused(self):
        target = Target(env=STANDBY_ENV)
        self.addCleanup(target.close)
        target.send("phase a")
        first = Attach(target.pid, "--duration", "30s", "-o", self.path("first.cilkprof"))
        self.addCleanup(lambda: first.proc.poll() is None and first.proc.kill())
        self.assertTrue(first.started(), "".join(first.stderr))
        second = run([CILKPROF, "attach", str(target.pid), "--duration", "1s", "-o", self.path("second.cilkprof")])
        self.assertEqual(second.returncode, 1, second.stderr)
        self.assertIn("already attached", second.stderr)
        self.assertEqual(second.stderr.count("\n"), 1, "one clear line: " + second.stderr)
        self.assertFalse(os.path.exists(self.path("second.cilkprof")))
        # The first goes on and ends normally on Ctrl-C (it then dies by SIGINT, like perf).
        first.proc.send_signal(signal.SIGINT)
        status, _, err = first.finish()
        self.assertIn(status, (0, -signal.SIGINT), err)
        self.assertIn(f"detached from process {target.pid}", err)
        self.assertGreater(function_samples(self.path("first.cilkprof")).get("hot_a", 0), 0)
        target.send("phase stop", "phase stopped")
        self.assertEqual(target.quit(), 0)


def test_user():
    """The unprivileged user of the permission test (created when missing), or None."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", TEST_USER],
                       check=True, capture_output=True)
        return pwd.getpwnam(TEST_USER)


class PermissionTest(Workdir):
    """A user attaching to root's process: refused with a message naming the problem."""

    def setUp(self):
        super().setUp()
        self.user = test_user()
        if self.user is None:
            print("not root: cannot run a process of another user; skipped", file=sys.stderr)
            sys.exit(SKIP_RETURN_CODE)
        os.chmod(self.dir, 0o1777)  # the user's working directory

    def attach_as_user(self, pid):
        def drop():
            os.setgroups([])
            os.setgid(self.user.pw_gid)
            os.setuid(self.user.pw_uid)
        return subprocess.run([CILKPROF, "attach", str(pid), "--duration", "1s"], cwd=self.dir,
                              preexec_fn=drop, capture_output=True, text=True, timeout=WAIT)

    def check_refused(self, target):
        r = self.attach_as_user(target.pid)
        print(f"as {TEST_USER}: status {r.returncode}: {r.stderr}", file=sys.stderr)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertRegex(r.stderr, r"(?i)permission|not allowed|another user|root|CAP_SYS_PTRACE")
        self.assertEqual(glob.glob(os.path.join(self.dir, "*.cilkprof")), [])
        target.send("work 5")  # unharmed
        self.assertEqual(target.quit(), 0)

    def test_standby_target_of_root(self):
        target = Target(env=STANDBY_ENV)
        self.addCleanup(target.close)
        self.check_refused(target)

    def test_target_without_agent_of_root(self):
        target = Target()
        self.addCleanup(target.close)
        self.check_refused(target)
        self.assertNotIn(AGENT, open(f"/proc/{target.pid}/maps").read() if target.proc.poll() is None else "")


class ErrorsTest(Workdir):
    """One clear message and exit status 1; the target unharmed."""

    def test_no_such_process(self):
        child = subprocess.Popen(["true"])
        child.wait()  # its PID is free now
        r = run([CILKPROF, "attach", str(child.pid), "--duration", "1s", "-o", self.path("x.cilkprof")])
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"no process {child.pid}", r.stderr)

    def test_static_binary(self):
        proc = subprocess.Popen([STATIC_BLOCKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (proc.poll() is None and proc.kill(), proc.wait()))
        self.assertEqual(proc.stdout.readline(), "ready\n")
        r = run([CILKPROF, "attach", str(proc.pid), "--duration", "1s", "-o", self.path("x.cilkprof")])
        print(r.stderr, file=sys.stderr)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("static", r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, "one clear line: " + r.stderr)
        out, _ = proc.communicate("x", timeout=WAIT)  # its read() goes on unharmed
        self.assertEqual(out, "read 1\n")
        self.assertEqual(proc.returncode, 0)

    def test_missing_daemon_socket(self):
        target = Target(env=STANDBY_ENV)
        self.addCleanup(target.close)
        r = run([CILKPROF, "attach", str(target.pid), "--daemon", "/nonexistent.sock"])
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("cannot connect to cilkprofd at /nonexistent.sock", r.stderr)
        # Not attached: a normal attach works at once.
        r = run([CILKPROF, "attach", str(target.pid), "--duration", "200ms", "-q", "-o", self.path("y.cilkprof")])
        self.assertEqual(r.returncode, 0, r.stderr)
        target.send("work 5")
        self.assertEqual(target.quit(), 0)

    def test_control_socket_removed_at_exit(self):
        # The socket of a standby process that ended is not left behind (a stale one per
        # process would pile up in /tmp/cilkprof-UID).
        target = Target(env=STANDBY_ENV)
        self.addCleanup(target.close)
        socket_path = f"/tmp/cilkprof-{os.geteuid()}/agent-{target.pid}.sock"
        self.assertTrue(os.path.exists(socket_path), socket_path)
        self.assertEqual(target.quit(), 0)
        self.assertFalse(os.path.exists(socket_path), socket_path + " is left behind")

    def test_detach_when_not_attached(self):
        target = Target(env=STANDBY_ENV)
        self.addCleanup(target.close)
        r = run([CILKPROF, "detach", str(target.pid)])
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("not attached", r.stderr)
        self.assertEqual(target.quit(), 0)


class Daemon:
    def __init__(self, directory, *extra):
        self.socket = os.path.join(directory, "d.sock")
        self.out = os.path.join(directory, "windows")
        os.mkdir(self.out)
        self.log = open(os.path.join(directory, "cilkprofd.log"), "w+")
        self.proc = subprocess.Popen([CILKPROFD, "--socket", self.socket, "--output-dir", self.out, *extra],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(lambda: os.path.exists(self.socket) or self.proc.poll() is not None, "cilkprofd's socket")
        assert self.proc.poll() is None, self.text()

    def text(self):
        self.log.seek(0)
        return self.log.read()

    def files_of(self, pid):
        return sorted(glob.glob(os.path.join(self.out, f"*.{pid}.*.cilkprof")))

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=WAIT)
        self.log.close()


class DaemonTest(Workdir):
    """Continuous mode: windows of each attached process, rotation, detach."""

    def test_windows_of_two_targets(self):
        daemon = Daemon(self.dir, "--window", "1s", "--keep", "3")
        self.addCleanup(daemon.close)
        targets = [Target(env=STANDBY_ENV), Target()]  # standby and injected
        for t in targets:
            self.addCleanup(t.close)
            t.send("phase a")
        for t in targets:
            r = run([CILKPROF, "attach", str(t.pid), "--daemon", daemon.socket])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"stop with: cilkprof detach {t.pid}", r.stderr)
            # Returns at once, the target runs on and answers.
            t.send("work 2")
        # Four windows each (bounded polling): --keep 3 leaves the newest three.
        for t in targets:
            seen = set()

            def four_windows():
                seen.update(daemon.files_of(t.pid))
                return len(seen) >= 4
            wait_until(four_windows, f"four windows of process {t.pid}\n{daemon.text()}", tries=3000)
            kept = daemon.files_of(t.pid)
            self.assertLessEqual(len(kept), 4, kept)  # the newest 3, maybe a 4th being rotated
        for t in targets:
            r = run([CILKPROF, "detach", str(t.pid)])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"detached from process {t.pid}", r.stderr)
            caught = int(proc_status(t.pid)["SigCgt"], 16)
            self.assertFalse(caught & SIGPROF_MASK)
            self.assertEqual(posix_timers(t.pid), "")
            t.send("work 60")  # busy, SIGPROF at its default action
        # A second detach has nothing to end.
        r = run([CILKPROF, "detach", str(targets[0].pid)])
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("not attached", r.stderr)
        # Every kept window is the target's own and holds the target's hot function.
        for t in targets:
            files = daemon.files_of(t.pid)
            self.assertTrue(files)
            with_samples = 0
            for f in files:
                s = summary(f)
                self.assertEqual(s["pid"], t.pid)
                with_samples += function_samples(f).get("hot_a", 0) > 0
            self.assertGreater(with_samples, 0, files)
            t.send("phase stop", "phase stopped")
            self.assertEqual(t.quit(), 0)


if __name__ == "__main__":
    unittest.main()
