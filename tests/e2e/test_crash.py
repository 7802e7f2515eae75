#!/usr/bin/env python3
"""Nothing lost on a crash (a stack overflow too), a kill or Ctrl-C; checksummed spills; no profile for a
collector of another user (issue 12, rows 3, 4 and 7).

Run by CTest like test_e2e.py (same environment variables). The program,
ends_by_signal, writes its own CPU time to $CPU_FILE as it runs, so each test compares
the profile's work (the sum of the samples' weights) with the CPU the program really
used, with generous bounds; nothing asserts on wall-clock time. Waits for "the program
has used N s of CPU" poll a file and are bounded.
"""
import glob
import os
import random
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_e2e import (AGENT, CILKPROF, CILKPROF_RUN, CILKPROFD, ProfileDir, find_nodes,  # noqa: E402
                      program, run, summary_json, view_json)

PROGRAM = program("e2e_ends_by_signal")
# The stand-in aggregator of another user needs an interpreter that user can run (not
# one under root's home).
FOREIGN_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def agent_env(**extra):
    """Our environment without CILKPROF_* (so that nothing outside changes the test)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CILKPROF_")}
    env.update(extra)
    return env


def cpu_used(path):
    """The program's CPU time in seconds, as it last wrote it (0 before it started)."""
    try:
        with open(path) as f:
            text = f.read().strip()
        return int(text) / 1e9 if text else 0.0
    except FileNotFoundError:
        return 0.0


def wait_for_cpu(path, seconds, proc, limit=120):
    """Waits until the program has used `seconds` of CPU (bounded, for a hung run)."""
    deadline = time.monotonic() + limit
    while cpu_used(path) < seconds:
        if proc.poll() is not None:
            raise AssertionError(f"the program ended before using {seconds} s of CPU: {proc.returncode}")
        if time.monotonic() > deadline:
            raise AssertionError(f"the program did not reach {seconds} s of CPU in {limit} s")
        time.sleep(0.01)


def child_of(pid):
    """The one child process of `pid` (the program cilkprof-run started)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                children = f.read().split()
        except FileNotFoundError:
            children = []
        if children:
            return int(children[0])
        time.sleep(0.01)
    raise AssertionError(f"process {pid} has no child")


def wait_gone(pid, limit=120):
    deadline = time.monotonic() + limit
    while os.path.exists(f"/proc/{pid}"):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(") ")[-1].startswith("Z"):
                    return  # a zombie: it has ended
        except FileNotFoundError:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"process {pid} did not end in {limit} s")
        time.sleep(0.02)


def work_seconds(profile):
    return summary_json(profile)["work"] / 1e9


def import_spills(d):
    """Imports every spill file of the directory; returns the profiles."""
    out = []
    for i, spill in enumerate(sorted(glob.glob(os.path.join(d.path, "cilkprof-*.spill")))):
        profile = d.file(f"imported{i}.cilkprof")
        run([CILKPROF, "import", "-q", "-o", profile, spill])
        out.append(profile)
    return out


class Collector:
    """A stand-in aggregator on a Unix socket that reads everything it is sent."""

    def __init__(self, path):
        self.path = path
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        self.server.listen(8)
        self.received = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                while True:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    self.received += len(chunk)

    def close(self):
        self.server.close()


def spawn_raw(argv, env, cwd):
    """Runs argv and returns its raw wait status (for WCOREDUMP)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)
    return status


class CrashTest(unittest.TestCase):
    """A program that crashes 0.5 s (of CPU) into its run: the profile is written, holds
    about the CPU it used, and the program dies exactly as it would have."""

    def check_profile(self, mode, signo, threads="0"):
        d = ProfileDir()
        try:
            cpu_file = d.file("cpu")
            out = d.file("p.cilkprof")
            proc = run([CILKPROF_RUN, "-q", "-o", out, "--", PROGRAM, mode, "0.5", threads],
                       env=dict(agent_env(CPU_FILE=cpu_file), CILKPROF_AGENT=AGENT), check=False)
            self.assertEqual(proc.returncode, 128 + signo, proc.stderr)
            self.assertTrue(os.path.exists(out), f"no profile after {mode}: {proc.stderr}")
            summary = summary_json(out)
            self.assertEqual(summary["end_reason"], f"signal {signo} (SIG{signal.Signals(signo).name[3:]})")
            used = cpu_used(cpu_file)
            work = summary["work"] / 1e9
            # Every sample up to the crash: the work is the CPU used, within sampling noise.
            self.assertGreaterEqual(work, 0.75 * used, f"{mode}: {work:.3f} s of work for {used:.3f} s of CPU")
            self.assertLessEqual(work, 1.25 * used + 0.02, f"{mode}: {work:.3f} s of work for {used:.3f} s of CPU")
            self.assertTrue(find_nodes(view_json(out), "spin_until"), "the samples' paths are missing")
        finally:
            d.cleanup()

    def test_null_dereference(self):
        self.check_profile("segv", signal.SIGSEGV)

    def test_null_dereference_with_threads(self):
        self.check_profile("segv", signal.SIGSEGV, threads="2")

    def test_division_by_zero(self):
        self.check_profile("fpe", signal.SIGFPE)

    def test_abort_inside_malloc(self):
        # glibc aborts inside free() with the heap's lock held: the last flush must not
        # need it.
        self.check_profile("abort-in-malloc", signal.SIGABRT)

    def test_same_signal_and_core_dump_as_without_the_agent(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
        try:
            for mode in ("segv", "fpe", "abort-in-malloc"):
                plain_dir = tempfile.TemporaryDirectory(prefix="cilkprof-core-plain-")
                agent_dir = tempfile.TemporaryDirectory(prefix="cilkprof-core-agent-")
                collector = Collector(os.path.join(agent_dir.name, "c.sock"))
                try:
                    argv = [PROGRAM, mode, "0.2"]
                    plain = spawn_raw(argv, agent_env(), plain_dir.name)
                    profiled = spawn_raw(argv, agent_env(LD_PRELOAD=AGENT, CILKPROF_SOCKET=collector.path),
                                         agent_dir.name)
                    self.assertTrue(os.WIFSIGNALED(plain), mode)
                    self.assertTrue(os.WIFSIGNALED(profiled), f"{mode}: status {profiled:#x}")
                    self.assertEqual(os.WTERMSIG(profiled), os.WTERMSIG(plain), mode)
                    self.assertEqual(os.WCOREDUMP(profiled), os.WCOREDUMP(plain), mode)
                    cores = lambda path: bool(glob.glob(os.path.join(path, "core*")))  # noqa: E731
                    self.assertEqual(cores(agent_dir.name), cores(plain_dir.name), mode)
                    self.assertGreater(collector.received, 0, f"{mode}: the agent sent nothing")
                finally:
                    collector.close()
                    plain_dir.cleanup()
                    agent_dir.cleanup()
        finally:
            resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))


OVERFLOW = program("e2e_stack_overflow")
# A sample taken during the overflow's recursion has a path thousands of frames deep:
# deeper than the json module's default recursion allows (as in test_deep_stack.py).
sys.setrecursionlimit(50000)


class StackOverflowTest(unittest.TestCase):
    """Unbounded recursion on a thread that has no alternate signal stack of its own:
    the agent's (agent/src/alt_stack.h) lets the last flush run, and the program still
    dies of SIGSEGV exactly as without the agent. The run is well under the agent's
    flush interval, so without the last flush the profile ends at an earlier flush."""

    def check_overflow(self, mode):
        d = ProfileDir()
        soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
        plain_dir = tempfile.TemporaryDirectory(prefix="cilkprof-overflow-plain-")
        agent_dir = tempfile.TemporaryDirectory(prefix="cilkprof-overflow-agent-")
        collector = Collector(os.path.join(agent_dir.name, "c.sock"))
        try:
            argv = [OVERFLOW, mode, "0.3"]
            plain = spawn_raw(argv, agent_env(), plain_dir.name)
            profiled = spawn_raw(argv, agent_env(LD_PRELOAD=AGENT, CILKPROF_SOCKET=collector.path), agent_dir.name)
            self.assertTrue(os.WIFSIGNALED(plain), f"{mode}: status {plain:#x} without the agent")
            self.assertEqual(os.WTERMSIG(plain), signal.SIGSEGV, mode)
            self.assertTrue(os.WIFSIGNALED(profiled), f"{mode}: status {profiled:#x}")
            self.assertEqual(os.WTERMSIG(profiled), os.WTERMSIG(plain), mode)
            self.assertEqual(os.WCOREDUMP(profiled), os.WCOREDUMP(plain), mode)
            cores = lambda path: bool(glob.glob(os.path.join(path, "core*")))  # noqa: E731
            self.assertEqual(cores(agent_dir.name), cores(plain_dir.name), mode)
            resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))

            cpu_file = d.file("cpu")
            out = d.file("p.cilkprof")
            bare = run(argv, env=agent_env(), check=False)
            proc = run([CILKPROF_RUN, "-q", "-o", out, "--"] + argv,
                       env=dict(agent_env(CPU_FILE=cpu_file), CILKPROF_AGENT=AGENT), check=False)
            self.assertEqual(bare.returncode, -signal.SIGSEGV, bare.stderr)
            self.assertEqual(proc.returncode, 128 - bare.returncode, proc.stderr)
            summary = summary_json(out)
            self.assertEqual(summary["end_reason"], "signal 11 (SIGSEGV)",
                             f"{mode}: the last flush did not run before the stack overflow killed the program")
            used = cpu_used(cpu_file)
            work = summary["work"] / 1e9
            # The recursion itself adds a few ms of CPU (page faults of a fresh stack).
            self.assertGreaterEqual(work, 0.75 * used, f"{mode}: {work:.3f} s of work for {used:.3f} s of CPU")
            self.assertLessEqual(work, 1.25 * used + 0.05, f"{mode}: {work:.3f} s of work for {used:.3f} s of CPU")
            self.assertTrue(find_nodes(view_json(out), "spin_until"), "the samples' paths are missing")
        finally:
            resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))
            collector.close()
            plain_dir.cleanup()
            agent_dir.cleanup()
            d.cleanup()

    def test_overflow_on_the_main_thread(self):
        self.check_overflow("main")

    def test_overflow_on_a_second_thread(self):
        self.check_overflow("thread")

    def run_overflow_program(self, *args):
        d = ProfileDir()
        try:
            return run([CILKPROF_RUN, "-q", "-o", d.file("p.cilkprof"), "--", OVERFLOW] + list(args),
                       env=dict(agent_env(), CILKPROF_AGENT=AGENT), check=False)
        finally:
            d.cleanup()

    def test_a_program_keeps_its_own_alternate_stack(self):
        # Installed after the agent gave the main thread one, and inherited by a fork
        # child's thread, which the agent registers again.
        for mode in ("own-altstack", "own-altstack-fork"):
            proc = self.run_overflow_program(mode)
            self.assertEqual(proc.returncode, 0, f"{mode}: {proc.stdout}{proc.stderr}")
            self.assertIn("the handler ran on the program's alternate stack", proc.stdout, mode)

    def test_a_fork_child_keeps_its_threads_stack_and_frees_the_others(self):
        # The forking thread's stack of the agent's is the child's thread's now; the
        # copies of the other threads' stacks are unmapped; an overflow in the child
        # still ends its profile with the last flush.
        d = ProfileDir()
        try:
            cpu_file = d.file("cpu")
            proc = run([CILKPROF_RUN, "-q", "-o", d.file("p.cilkprof"), "--", OVERFLOW, "fork-overflow", "0.3"],
                       env=dict(agent_env(CPU_FILE=cpu_file), CILKPROF_AGENT=AGENT), check=False)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("child: other threads' alternate stacks mapped 0 of 4; its own: enabled", proc.stdout)
            self.assertIn(f"child died of signal {int(signal.SIGSEGV)}", proc.stdout)
            children = glob.glob(d.file("p.*.cilkprof"))
            self.assertEqual(len(children), 1, os.listdir(d.path))
            summary = summary_json(children[0])
            self.assertEqual(summary["end_reason"], "signal 11 (SIGSEGV)")
            used = cpu_used(cpu_file)
            work = summary["work"] / 1e9
            self.assertGreaterEqual(work, 0.75 * used, f"{work:.3f} s of work for {used:.3f} s of CPU")
            self.assertLessEqual(work, 1.25 * used + 0.05, f"{work:.3f} s of work for {used:.3f} s of CPU")
        finally:
            d.cleanup()

    def test_the_last_flush_fits_the_alternate_stack(self):
        # The program's own alternate stack, kept by the agent, shows what the fault
        # guard and the last flush use of it: a fraction of the agent's 64 KiB
        # (alt_stack.cc), which must also hold a second fault inside the flush.
        proc = self.run_overflow_program("altstack-use", "0.1")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        m = re.search(r"child status (\d+) altstack bytes used (\d+)", proc.stdout)
        self.assertIsNotNone(m, proc.stdout)
        self.assertEqual(int(m.group(1)), 128 + signal.SIGSEGV, proc.stdout)
        used = int(m.group(2))
        self.assertGreater(used, 0, "the last flush did not run on the alternate stack")
        self.assertLess(used, 32 << 10, f"the fault guard and the last flush used {used} bytes of the stack")

    def test_short_threads_leave_no_mappings_behind(self):
        # Each thread gets a stack of the agent's (the first one says so) and gives it
        # back; the guard page below each keeps leaked ones from merging into one line.
        proc = self.run_overflow_program("short-threads", "2000")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("a thread's alternate stack: enabled", proc.stdout)
        m = re.search(r"maps before (\d+) after (\d+)", proc.stdout)
        self.assertIsNotNone(m, proc.stdout)
        before, after = int(m.group(1)), int(m.group(2))
        self.assertLess(after - before, 50, f"2000 threads left {after - before} mappings behind")


class KillTest(unittest.TestCase):
    """kill -9 of the program: no handler runs, so what it did after the agent's last
    flush is lost; the profile says how much, and the rest is there."""

    def test_sigkill_of_the_program(self):
        d = ProfileDir()
        try:
            cpu_file = d.file("cpu")
            out = d.file("p.cilkprof")
            wrapper = subprocess.Popen([CILKPROF_RUN, "-q", "-o", out, "--", PROGRAM, "spin", "0", "1"],
                                       env=dict(agent_env(CPU_FILE=cpu_file), CILKPROF_AGENT=AGENT),
                                       stderr=subprocess.PIPE, text=True)
            target = child_of(wrapper.pid)
            wait_for_cpu(cpu_file, 1.0, wrapper)
            os.kill(target, signal.SIGKILL)
            _, err = wrapper.communicate(timeout=120)
            self.assertEqual(wrapper.returncode, 128 + signal.SIGKILL, err)
            summary = summary_json(out)
            self.assertEqual(summary["end_reason"], "connection lost")
            lost = [w for w in summary["warnings"] if "after the agent's last flush" in w]
            self.assertEqual(len(lost), 1, summary["warnings"])
            estimate = float(re.search(r"about ([0-9.]+) s of CPU", lost[0]).group(1))
            used = cpu_used(cpu_file)
            work = summary["work"] / 1e9
            # What is in the profile plus what it says is missing: the CPU used.
            self.assertGreaterEqual(work + estimate, 0.75 * used, f"{work} + {estimate} for {used}")
            self.assertLessEqual(work + estimate, 1.25 * used + 0.05, f"{work} + {estimate} for {used}")
        finally:
            d.cleanup()


# cilkprof-run reports a program killed by SIGINT as status 130, or dies of SIGINT
# itself (as shells expect of a command that Ctrl-C ended).
DIED_OF_SIGINT = (128 + signal.SIGINT, -signal.SIGINT)


class CtrlCTest(unittest.TestCase):
    """Ctrl-C (SIGINT to the process group): the program dies of SIGINT, after the
    agent's last flush, unless its own handler keeps it alive."""

    def interrupt(self, mode):
        d = ProfileDir()
        cpu_file = d.file("cpu")
        out = d.file("p.cilkprof")
        # Its own session and process group, like a shell's foreground job.
        wrapper = subprocess.Popen([CILKPROF_RUN, "-q", "-o", out, "--", PROGRAM, mode, "0.2", "1"],
                                   env=dict(agent_env(CPU_FILE=cpu_file), CILKPROF_AGENT=AGENT),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        wait_for_cpu(cpu_file, 1.0, wrapper)
        os.killpg(wrapper.pid, signal.SIGINT)
        stdout, err = wrapper.communicate(timeout=120)
        return d, out, cpu_file, wrapper.returncode, stdout, err

    def test_ctrl_c_keeps_every_sample(self):
        d, out, cpu_file, rc, _, err = self.interrupt("spin")
        try:
            self.assertIn(rc, DIED_OF_SIGINT, err)
            summary = summary_json(out)
            self.assertEqual(summary["end_reason"], "signal 2 (SIGINT)")
            used = cpu_used(cpu_file)
            self.assertGreaterEqual(summary["work"] / 1e9, 0.75 * used)
        finally:
            d.cleanup()

    def test_a_handler_that_returns_keeps_the_program_alive(self):
        d, out, _, rc, stdout, err = self.interrupt("handler-returns")
        try:
            self.assertEqual(rc, 0, err)
            self.assertIn("the SIGINT handler returned", stdout)
            self.assertEqual(summary_json(out)["end_reason"], "exit")
        finally:
            d.cleanup()

    def test_a_handler_that_reraises_still_gets_the_last_flush(self):
        d, out, cpu_file, rc, _, err = self.interrupt("handler-reraises")
        try:
            self.assertIn(rc, DIED_OF_SIGINT, err)
            summary = summary_json(out)
            self.assertEqual(summary["end_reason"], "signal 2 (SIGINT)")
            self.assertGreaterEqual(summary["work"] / 1e9, 0.75 * cpu_used(cpu_file))
        finally:
            d.cleanup()


class KillCollectorTest(unittest.TestCase):
    """kill -9 of cilkprof-run or cilkprofd: the program runs on, and the agent writes
    everything it recorded (not only what came after) to a spill file that imports."""

    def check_spill(self, d, err, cpu_file):
        self.assertRegex(err, r"cilkprof import \S+\.spill", "the message does not name the spill file")
        profiles = import_spills(d)
        self.assertEqual(len(profiles), 1, err)
        used = cpu_used(cpu_file)
        work = work_seconds(profiles[0])
        self.assertGreaterEqual(work, 0.85 * used, f"{work:.3f} s of work for {used:.3f} s of CPU")
        self.assertLessEqual(work, 1.15 * used + 0.02, f"{work:.3f} s of work for {used:.3f} s of CPU")

    def test_sigkill_of_cilkprof_run(self):
        d = ProfileDir()
        try:
            cpu_file = d.file("cpu")
            wrapper = subprocess.Popen([CILKPROF_RUN, "-q", "-o", d.file("p.cilkprof"), "--", PROGRAM, "run",
                                        "1.5", "1"],
                                       env=dict(agent_env(CPU_FILE=cpu_file, CILKPROF_SPILL_DIR=d.path),
                                                CILKPROF_AGENT=AGENT),
                                       stderr=subprocess.PIPE, text=True)
            target = child_of(wrapper.pid)
            wait_for_cpu(cpu_file, 1.5, wrapper)  # several flushes reached it
            wrapper.kill()
            wrapper.wait()
            wait_gone(target)
            err = wrapper.stderr.read()
            self.check_spill(d, err, cpu_file)
        finally:
            d.cleanup()

    def test_sigkill_of_cilkprofd(self):
        d = ProfileDir()
        sock = d.file("d.sock")
        os.mkdir(d.file("out"))
        daemon = subprocess.Popen([CILKPROFD, "--socket", sock, "--output-dir", d.file("out")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not os.path.exists(sock):
                self.assertIsNone(daemon.poll(), "cilkprofd exited at start-up")
                self.assertLess(time.monotonic(), deadline, "cilkprofd did not create its socket")
                time.sleep(0.05)
            cpu_file = d.file("cpu")
            target = subprocess.Popen([PROGRAM, "run", "1.5", "1"],
                                      env=agent_env(LD_PRELOAD=AGENT, CILKPROF_SOCKET=sock, CPU_FILE=cpu_file,
                                                    CILKPROF_SPILL_DIR=d.path),
                                      stderr=subprocess.PIPE, text=True)
            wait_for_cpu(cpu_file, 1.5, target)
            daemon.kill()
            daemon.wait()
            _, err = target.communicate(timeout=120)
            self.assertEqual(target.returncode, 0, err)
            self.check_spill(d, err, cpu_file)
        finally:
            if daemon.poll() is None:
                daemon.kill()
                daemon.wait()
            d.cleanup()


    def test_crash_after_the_aggregator_went_away(self):
        # The stand-in takes the first bytes and hangs up; the program crashes soon
        # after. Whether the flusher or the crash path finds out first, the spill holds
        # the whole run and its end.
        d = ProfileDir()
        sock = d.file("hangs-up.sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(sock)
        server.listen(1)
        try:
            cpu_file = d.file("cpu")
            target = subprocess.Popen([PROGRAM, "segv", "0.3"],
                                      env=agent_env(LD_PRELOAD=AGENT, CILKPROF_SOCKET=sock, CPU_FILE=cpu_file,
                                                    CILKPROF_SPILL_DIR=d.path),
                                      stderr=subprocess.PIPE, text=True)
            conn, _ = server.accept()
            conn.recv(65536)
            conn.close()
            _, err = target.communicate(timeout=120)
            self.assertEqual(target.returncode, -signal.SIGSEGV, err)
            self.check_spill(d, err, cpu_file)
            profile = d.file("imported0.cilkprof")
            self.assertEqual(summary_json(profile)["end_reason"], "signal 11 (SIGSEGV)")
        finally:
            server.close()
            d.cleanup()


class SpillChecksumTest(unittest.TestCase):
    """Row 7: a flipped byte in a real spill file is reported, never imported silently."""

    def test_twenty_random_flips_are_all_detected(self):
        d = ProfileDir()
        try:
            # No aggregator at that path: the agent spills the whole run.
            proc = subprocess.run([PROGRAM, "run", "0.3", "1"],
                                  env=agent_env(LD_PRELOAD=AGENT, CILKPROF_SOCKET=d.file("nobody.sock"),
                                                CILKPROF_SPILL_DIR=d.path),
                                  capture_output=True, text=True, timeout=240)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            spills = glob.glob(d.file("cilkprof-*.spill"))
            self.assertEqual(len(spills), 1, proc.stderr)
            with open(spills[0], "rb") as f:
                clean = f.read()
            run([CILKPROF, "import", "-q", "-o", d.file("clean.cilkprof"), spills[0]])
            rng = random.Random(20261125)
            for trial in range(20):
                at = rng.randrange(len(clean))
                damaged = bytearray(clean)
                damaged[at] ^= rng.randrange(1, 256)
                path = d.file(f"flip{trial}.spill")
                with open(path, "wb") as f:
                    f.write(damaged)
                res = run([CILKPROF, "import", "-o", d.file(f"flip{trial}.cilkprof"), path], check=False)
                text = res.stdout + res.stderr
                detected = res.returncode != 0 or "damaged" in text or "truncated" in text or "before byte" in text
                self.assertTrue(detected, f"flip at byte {at} of {len(clean)} imported silently:\n{text}")
        finally:
            d.cleanup()


class ForeignCollectorTest(unittest.TestCase):
    """Row 3: a listener that another user created at the socket path gets nothing; the
    profile goes to a spill file, with one line on stderr (none when quiet)."""

    SERVER = r"""
import os, socket, sys
path, count_file = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o777)
s.listen(4)
open(count_file + ".ready", "w").close()
total = 0
s.settimeout(60)
try:
    conn, _ = s.accept()
    conn.settimeout(60)
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        total += len(chunk)
except OSError:
    pass
with open(count_file, "w") as f:
    f.write(str(total))
"""

    def run_against_foreign_listener(self, quiet):
        if os.geteuid() != 0:
            self.skipTest("needs root to run the stand-in aggregator as another user")
        d = ProfileDir()
        shared = tempfile.mkdtemp(prefix="cilkprof-foreign-")
        os.chmod(shared, 0o777)
        sock = os.path.join(shared, "agents.sock")
        count_file = os.path.join(shared, "count")

        def become_nobody():
            os.setgid(65534)
            os.setuid(65534)

        server = subprocess.Popen([FOREIGN_PYTHON, "-c", self.SERVER, sock, count_file], preexec_fn=become_nobody)
        try:
            deadline = time.monotonic() + 60
            while not os.path.exists(count_file + ".ready"):
                self.assertIsNone(server.poll(), "the stand-in aggregator did not start")
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.02)
            env = agent_env(LD_PRELOAD=AGENT, CILKPROF_SOCKET=sock, CILKPROF_SPILL_DIR=d.path)
            if quiet:
                env["CILKPROF_QUIET"] = "1"
            proc = subprocess.run([PROGRAM, "run", "0.2"], env=env, capture_output=True, text=True, timeout=240)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            server.wait(timeout=120)
            with open(count_file) as f:
                self.assertEqual(f.read(), "0", "the foreign listener received data")
            spills = glob.glob(d.file("cilkprof-*.spill"))
            self.assertEqual(len(spills), 1, proc.stderr)
            run([CILKPROF, "import", "-q", "-o", d.file("p.cilkprof"), spills[0]])
            return proc.stderr
        finally:
            if server.poll() is None:
                server.kill()
            d.cleanup()
            for name in os.listdir(shared):
                os.unlink(os.path.join(shared, name))
            os.rmdir(shared)

    def test_listener_of_another_user_gets_nothing(self):
        err = self.run_against_foreign_listener(quiet=False)
        lines = [line for line in err.splitlines() if line.startswith("cilkprof:")]
        self.assertEqual(len(lines), 1, err)
        self.assertIn("uid 65534", lines[0])
        self.assertIn("cilkprof import", lines[0])

    def test_quiet_says_nothing(self):
        err = self.run_against_foreign_listener(quiet=True)
        self.assertEqual([line for line in err.splitlines() if line.startswith("cilkprof:")], [], err)


if __name__ == "__main__":
    unittest.main()
