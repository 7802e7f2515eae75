#!/usr/bin/env python3
"""cilkprof-run keeps the program's world, harms no file, and loses no profile.

End-to-end, with the real agent, through tests/e2e/programs/world.c (issue 12):
- ProgramWorld: the signal dispositions and mask, file descriptors, process group and
  environment the program sees are those it sees without cilkprof-run; a nohup'd
  profiled program survives SIGHUP.
- ForwardedSignals: SIGINT, SIGTERM and SIGHUP sent to cilkprof-run reach the program,
  and its profile is written.
- BackgroundProcesses: cilkprof-run returns when the program ends, not when what it
  left in the background does, and writes what those processes sent.
- OutputFiles: -o replaces only a regular file (never a device, FIFO, socket,
  directory or symbolic link, not even one created while the program runs); profiles
  are 0600; a profile that cannot be written at -o is written elsewhere, named, and
  the exit status says so; our messages never go to the program's stdout.
- JobControl: in an interactive shell, Ctrl-Z, fg and Ctrl-C act on the profiled
  program as on the plain one.

Run by CTest (tests/e2e/CMakeLists.txt); every wait is a handshake on the program's
output, and the timeouts only bound a failing test.
"""
import json
import os
import pty
import re
import select
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import unittest

BIN = os.environ.get("CILKPROF_BIN_DIR", "")
PROGRAMS = os.environ.get("E2E_PROGRAMS", "")
CILKPROF = os.path.join(BIN, "cilkprof")
CILKPROF_RUN = os.path.join(BIN, "cilkprof-run")
WORLD = os.path.join(PROGRAMS, "e2e_world")
GUARD = 120  # seconds: only a failing test waits this long


class TempDir:
    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="cilkprof-world-")

    def file(self, name):
        return os.path.join(self.path, name)

    def remove(self):
        shutil.rmtree(self.path, ignore_errors=True)


class WithTempDir(unittest.TestCase):
    def setUp(self):
        self.dir = TempDir()
        self.addCleanup(self.dir.remove)
        # Fallback profiles go to $XDG_CACHE_HOME/cilkprof: keep them in the test's directory.
        self.env = dict(os.environ, XDG_CACHE_HOME=self.dir.file("cache"))

    def assert_profile(self, path):
        """A readable profile of mode 0600."""
        self.assertTrue(os.path.isfile(path), f"no profile at {path}")
        self.assertEqual(stat.S_IMODE(os.lstat(path).st_mode), 0o600, path)
        summary = subprocess.run([CILKPROF, "summary", "--format", "json", path], capture_output=True, text=True,
                                 timeout=GUARD)
        self.assertEqual(summary.returncode, 0, summary.stderr)
        return json.loads(summary.stdout)


def read_line_matching(stream, pattern):
    """Reads lines of a child's output until one matches; the match."""
    while True:
        ready, _, _ = select.select([stream], [], [], GUARD)
        if not ready:
            raise AssertionError(f"no line matching {pattern!r} within {GUARD} s")
        line = stream.readline()
        if not line:
            raise AssertionError(f"end of output before a line matching {pattern!r}")
        match = re.search(pattern, line)
        if match:
            return match


def world_reports(text):
    """The `world report` blocks printed into `text`, in order."""
    return [block.split("--- end\n")[0] for block in text.split("--- world\n")[1:]]


class ProgramWorldTest(WithTempDir):
    def test_the_program_sees_what_it_sees_without_cilkprof_run(self):
        keep_r, keep_w = os.pipe()
        self.addCleanup(os.close, keep_w)
        self.addCleanup(os.close, keep_r)

        def handed_down():
            # What a caller may hand a program besides `trap`: a blocked mask, and a
            # SIGCHLD that is ignored (which must not cost cilkprof-run the status).
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGUSR2})
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)

        profile = self.dir.file("world.cilkprof")
        # `; true`: bash would exec the last command itself and change SHLVL for it.
        script = (f"trap '' INT HUP QUIT PIPE TTOU; exec 7</dev/null; {WORLD} report; "
                  f"{CILKPROF_RUN} -q -o {profile} -- {WORLD} report; true")
        proc = subprocess.run(["bash", "-c", script], preexec_fn=handed_down, pass_fds=[keep_r],
                              capture_output=True, text=True, env=self.env, timeout=GUARD)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        reports = world_reports(proc.stdout)
        self.assertEqual(len(reports), 2, proc.stdout + proc.stderr)
        plain, profiled = reports
        # The test itself: each of these is in the plain run...
        for line in ("disposition SIGINT ignored", "disposition SIGHUP ignored", "disposition SIGPIPE ignored",
                     "disposition SIGCHLD ignored", "disposition SIGTERM default", "blocked SIGUSR1",
                     "blocked SIGUSR2", f"fd {keep_r} pipe", "fd 7 /dev/null", "pgid "):
            self.assertIn(line, plain)
        # ...and the profiled run sees exactly the same.
        self.assertEqual(plain, profiled)
        self.assert_profile(profile)

    def test_the_profile_names_the_command_the_program_started_with(self):
        # The program writes over its argument strings before the agent's first flush;
        # the profile keeps the command line as it started (Hello.argv), which the
        # summary's "command" and the pprof export's comment show.
        profile = self.dir.file("retitle.cilkprof")
        proc = subprocess.run([CILKPROF_RUN, "-q", "-o", profile, "--", WORLD, "retitle", "--size", "3"],
                              capture_output=True, text=True, env=self.env, timeout=GUARD)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("cmdline " + WORLD + " ******* ****** *", proc.stdout)
        summary = self.assert_profile(profile)
        self.assertEqual(summary["command"], [WORLD, "retitle", "--size", "3"])

    def test_a_nohup_profiled_program_survives_sighup_and_is_profiled(self):
        profile = self.dir.file("nohup.cilkprof")
        proc = subprocess.Popen(["nohup", CILKPROF_RUN, "-q", "-o", profile, "--", WORLD, "hold", "0"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=self.env, start_new_session=True)
        try:
            read_line_matching(proc.stdout, r"^ready (\d+)")
            os.killpg(proc.pid, signal.SIGHUP)  # the hangup reaches the whole job
            out, err = proc.communicate(input="", timeout=GUARD)  # then the program may end
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        self.assertEqual(proc.returncode, 0, f"the program did not survive SIGHUP\n{err}")
        self.assert_profile(profile)


class ForwardedSignalsTest(WithTempDir):
    def catch(self, signo):
        profile = self.dir.file(f"catch-{signo}.cilkprof")
        proc = subprocess.Popen([CILKPROF_RUN, "-q", "-o", profile, "--", WORLD, "catch"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=self.env)
        try:
            read_line_matching(proc.stdout, r"^ready (\d+)")
            os.kill(proc.pid, signo)
            out, err = proc.communicate(timeout=GUARD)
        finally:
            if proc.poll() is None:
                proc.kill()
        name = signal.Signals(signo).name
        self.assertIn(f"received {name} from sender {proc.pid}", out, err)
        self.assertEqual(proc.returncode, 3, err)
        self.assert_profile(profile)

    def test_sigint_is_passed_on(self):
        self.catch(signal.SIGINT)

    def test_sigterm_is_passed_on(self):
        self.catch(signal.SIGTERM)

    def test_sighup_is_passed_on(self):
        self.catch(signal.SIGHUP)

    def test_a_program_killed_by_the_passed_signal_is_profiled(self):
        for signo in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            with self.subTest(signal=signo.name):
                profile = self.dir.file(f"killed-{signo}.cilkprof")
                # "flushed": the profile does not depend on the agent's flush at a fatal signal.
                proc = subprocess.Popen([CILKPROF_RUN, "-q", "-o", profile, "--", WORLD, "flushed", "hold", "0"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env=self.env)
                try:
                    read_line_matching(proc.stdout, r"^ready (\d+)")
                    os.kill(proc.pid, signo)
                    # Not communicate(): it closes the program's standard input at once,
                    # and a program that reads end-of-file before the passed signal
                    # arrives exits 0. Its input stays open until it has ended.
                    proc.wait(timeout=GUARD)
                    err = proc.stderr.read()
                finally:
                    if proc.poll() is None:
                        proc.kill()
                    for stream in (proc.stdin, proc.stdout, proc.stderr):
                        stream.close()
                # cilkprof-run then dies by the same signal, as the program did, so that a
                # shell loop around it stops on Ctrl-C as it would around the program.
                self.assertEqual(proc.returncode, -signo, err)
                self.assertGreater(self.assert_profile(profile)["samples"], 0)

    def test_a_program_that_exits_with_a_signal_like_status_is_not_mistaken_for_a_killed_one(self):
        profile = self.dir.file("exit130.cilkprof")
        proc = subprocess.run([CILKPROF_RUN, "-q", "-o", profile, "--", "/bin/sh", "-c", "exit 130"],
                              capture_output=True, text=True, env=self.env, timeout=GUARD)
        self.assertEqual(proc.returncode, 130, proc.stderr)


class BackgroundProcessesTest(WithTempDir):
    def test_run_returns_when_the_program_ends_and_writes_what_the_background_sent(self):
        hold_r, hold_w = os.pipe()
        self.addCleanup(os.close, hold_r)
        fifo = self.dir.file("ready.fifo")
        os.mkfifo(fifo)
        profile = self.dir.file("main.cilkprof")
        # The program starts a process in the background and ends once that process has
        # exec'd (its first image's samples are at the collector) and holds on a pipe
        # the test keeps open: it outlives the program and cilkprof-run.
        script = (f"{WORLD} flushed hold {hold_r} >{fifo} 2>/dev/null </dev/null & "
                  f"read line <{fifo}; echo \"background $!\"")
        try:
            proc = subprocess.run([CILKPROF_RUN, "-q", "-o", profile, "--", "/bin/sh", "-c", script],
                                  pass_fds=[hold_r], capture_output=True, text=True, env=self.env, timeout=GUARD)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            background = int(re.search(r"background (\d+)", proc.stdout).group(1))
            os.kill(background, 0)  # still running: cilkprof-run did not wait for it
            # Beside the program's profile, under its pid, whichever connected first.
            related = self.dir.file(f"main.{background}.cilkprof")
            summary = self.assert_profile(related)
            # Written at the end of the drain with what it had sent: its first image's
            # samples ("exec"), and the second image's if its agent had reported.
            self.assertIn(summary["end_reason"], ("exec", "connection lost"))
            self.assertGreater(summary["samples"], 0)
        finally:
            os.close(hold_w)  # the background process reads end of file and exits


class OutputFilesTest(WithTempDir):
    def run_tool(self, args, **kwargs):
        return subprocess.run([CILKPROF_RUN] + args, capture_output=True, text=True, env=self.env, timeout=GUARD,
                              cwd=self.dir.path, **kwargs)

    def refused_before_running(self, target, kind_words, force=True):
        """-o target is refused with exit status 2, naming what it is, before the program runs."""
        marker = self.dir.file("ran")
        before = os.lstat(target)
        args = ["-q"] + (["-f"] if force else []) + ["-o", target, "--", "/bin/sh", "-c", f"touch {marker}"]
        proc = self.run_tool(args)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(kind_words, proc.stderr)
        self.assertEqual(proc.stderr.count("\n"), 1, proc.stderr)  # one message
        self.assertFalse(os.path.exists(marker), "the program ran")
        after = os.lstat(target)
        self.assertEqual((before.st_mode, before.st_ino, before.st_rdev), (after.st_mode, after.st_ino, after.st_rdev))
        self.assertEqual([n for n in os.listdir(os.path.dirname(target) or ".") if ".tmp-" in n], [])

    def test_a_character_device_is_never_replaced(self):
        device = self.dir.file("null")
        try:
            os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except PermissionError:
            self.skipTest("mknod needs root (CI runs the tests as root)")
        self.refused_before_running(device, "will not replace")
        self.refused_before_running(device, "it is a character device")
        self.refused_before_running(device, "it is a character device", force=False)
        self.assertTrue(stat.S_ISCHR(os.lstat(device).st_mode))

    def test_dev_null_is_named_as_a_device(self):
        # Without -f on purpose: a cilkprof-run with this bug and -f would replace the
        # machine's /dev/null (the test above checks -f on a device of its own).
        self.refused_before_running("/dev/null", "will not replace '/dev/null'", force=False)
        self.assertTrue(stat.S_ISCHR(os.lstat("/dev/null").st_mode))

    def test_fifo_socket_and_symbolic_link_are_never_replaced(self):
        fifo = self.dir.file("fifo")
        os.mkfifo(fifo)
        self.refused_before_running(fifo, "it is a FIFO")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(sock.close)
        sock.bind(self.dir.file("sock"))
        self.refused_before_running(self.dir.file("sock"), "it is a socket")
        with open(self.dir.file("real.cilkprof"), "w") as f:
            f.write("not replaced\n")
        os.symlink("real.cilkprof", self.dir.file("link.cilkprof"))
        self.refused_before_running(self.dir.file("link.cilkprof"), "it is a symbolic link")
        with open(self.dir.file("real.cilkprof")) as f:
            self.assertEqual(f.read(), "not replaced\n")

    def test_a_directory_is_refused_not_turned_into_a_name_beside_it(self):
        target = self.dir.file("profiles")
        os.mkdir(target)
        for force in (True, False):
            self.refused_before_running(target, "is a directory; give the profile a file name", force=force)
        self.assertEqual(sorted(os.listdir(self.dir.path)), ["profiles"])
        self.assertEqual(os.listdir(target), [])

    def test_a_fifo_created_while_the_program_runs_is_not_opened_or_replaced(self):
        for force in (True, False):
            with self.subTest(force=force):
                target = self.dir.file(f"out-{force}.cilkprof")
                if force:
                    with open(target, "w") as f:
                        f.write("old\n")
                # The program swaps the -o file for a FIFO: opening it would hang the run.
                proc = self.run_tool(["-q"] + (["-f"] if force else []) + ["-o", target, "--", "/bin/sh", "-c",
                                      f"rm -f {target}; mkfifo {target}"])
                self.assertEqual(proc.returncode, 125, proc.stderr)
                self.assertTrue(stat.S_ISFIFO(os.lstat(target).st_mode))
                where = re.search(r"was written to (\S+)$", proc.stderr.strip())
                self.assertIsNotNone(where, proc.stderr)
                self.assertEqual(os.path.dirname(where.group(1)), self.dir.path)
                self.assert_profile(where.group(1))

    def test_a_regular_file_is_replaced_with_force_by_a_0600_profile(self):
        target = self.dir.file("old.cilkprof")
        with open(target, "w") as f:
            f.write("old\n")
        os.chmod(target, 0o644)
        proc = self.run_tool(["-q", "-f", "-o", target, "--", "/bin/true"], preexec_fn=lambda: os.umask(0))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stderr, "")
        self.assert_profile(target)
        self.assertEqual(sorted(os.listdir(self.dir.path)), ["old.cilkprof"])  # no staging or temporary file left

    def test_profiles_are_created_0600_whatever_the_umask(self):
        proc = self.run_tool(["-q", "--", "/bin/true"], preexec_fn=lambda: os.umask(0))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assert_profile(self.dir.file("true.cilkprof"))

    def test_the_agents_spill_file_is_created_0600(self):
        spill_dir = self.dir.file("spill")
        os.mkdir(spill_dir)
        env = dict(self.env, LD_PRELOAD=os.environ.get("CILKPROF_AGENT", ""), CILKPROF_SPILL_DIR=spill_dir,
                   CILKPROF_SOCKET=self.dir.file("nobody-listens.sock"), CILKPROF_QUIET="1")
        proc = subprocess.run(["/bin/true"], env=env, capture_output=True, text=True, timeout=GUARD,
                              preexec_fn=lambda: os.umask(0))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        spills = os.listdir(spill_dir)
        self.assertEqual(len(spills), 1, spills)
        self.assertEqual(stat.S_IMODE(os.lstat(os.path.join(spill_dir, spills[0])).st_mode), 0o600)

    def test_an_unwritable_output_goes_to_a_named_fallback_and_the_status_says_so(self):
        # The report: /proc/version passes the checks (a regular file, -f) and
        # fails when the profile is written. The program's output stays its own.
        for quiet in (True, False):
            with self.subTest(quiet=quiet):
                out = self.dir.file(f"out-{quiet}.txt")
                with open(out, "w") as stdout:
                    proc = subprocess.run([CILKPROF_RUN] + (["-q"] if quiet else []) +
                                          ["-f", "-o", "/proc/version", "--", "/bin/echo", "hi"],
                                          stdout=stdout, stderr=subprocess.PIPE, text=True, env=self.env,
                                          timeout=GUARD, cwd=self.dir.path)
                with open(out) as f:
                    self.assertEqual(f.read(), "hi\n")
                self.assertEqual(proc.returncode, 125, proc.stderr)
                where = re.search(r"wrote it to (\S+) instead|it was written to (\S+) instead", proc.stderr)
                self.assertIsNotNone(where, proc.stderr)
                fallback = where.group(1) or where.group(2)
                self.assertTrue(fallback.startswith(self.dir.file("cache") + "/cilkprof/"), fallback)
                self.assert_profile(fallback)
                self.assertEqual(stat.S_IMODE(os.lstat(os.path.dirname(fallback)).st_mode), 0o700)

    def test_a_directory_removed_while_the_program_runs_costs_no_profile(self):
        os.mkdir(self.dir.file("gone"))
        target = self.dir.file("gone/p.cilkprof")
        proc = self.run_tool(["-q", "-o", target, "--", "/bin/sh", "-c", f"rmdir {self.dir.file('gone')}; exit 7"])
        # The program's status comes first; the message says where the profile is.
        self.assertEqual(proc.returncode, 7, proc.stderr)
        where = re.search(r"it was written to (\S+) instead", proc.stderr)
        self.assertIsNotNone(where, proc.stderr)
        self.assert_profile(where.group(1))

    def test_our_messages_never_reach_the_programs_stdout(self):
        target = self.dir.file("busy.cilkprof")
        with open(target, "w") as f:
            f.write("x\n")
        proc = self.run_tool(["-o", target, "--", "/bin/echo", "hi"])  # refused: exists without -f
        self.assertEqual(proc.returncode, 2)
        self.assertEqual(proc.stdout, "")
        proc = self.run_tool(["-f", "-o", self.dir.file("ok.cilkprof"), "--", "/bin/echo", "hi"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "hi\n")
        self.assertIn("cilkprof: the program exited with status 0", proc.stderr)


class JobControlTest(WithTempDir):
    """An interactive bash on a pseudo-terminal runs the profiled program as a job."""

    def setUp(self):
        super().setUp()
        env = dict(self.env, PS1="PROMPT> ", TERM="dumb")
        self.shell, self.tty = pty.fork()
        if self.shell == 0:
            os.chdir(self.dir.path)
            os.execvpe("bash", ["bash", "--norc", "--noprofile", "--noediting", "-i"], env)
        self.seen = ""
        self.addCleanup(self.close)
        self.expect(r"PROMPT> ")

    def close(self):
        try:
            os.kill(self.shell, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.shell, 0)
        os.close(self.tty)

    def send(self, text):
        os.write(self.tty, text.encode())

    def expect(self, pattern):
        """Reads the terminal until `pattern` appears after what earlier calls consumed."""
        while True:
            match = re.search(pattern, self.seen)
            if match:
                self.seen = self.seen[match.end():]
                return match
            ready, _, _ = select.select([self.tty], [], [], GUARD)
            if not ready:
                raise AssertionError(f"no {pattern!r} on the terminal within {GUARD} s; it shows:\n{self.seen}")
            self.seen += os.read(self.tty, 4096).decode(errors="replace")

    def wait_for_state(self, pid, wanted):
        """The process state of `pid` (proc(5)) once it is `wanted`, or at the guard."""
        deadline = time.monotonic() + GUARD
        while True:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if state == wanted or time.monotonic() > deadline:
                return state
            select.select([], [], [], 0.01)

    def status(self):
        self.send("echo status=$?\n")
        return int(self.expect(r"status=(\d+)").group(1))

    def test_ctrl_z_fg_and_ctrl_c_reach_the_profiled_program(self):
        stopped = self.dir.file("stopped.cilkprof")
        self.send(f"{CILKPROF_RUN} -q -o {stopped} -- {WORLD} tty-wait\n")
        program = int(self.expect(r"ready (\d+)").group(1))
        self.send("\x1a")  # Ctrl-Z
        self.expect(r"Stopped")
        self.expect(r"PROMPT> ")
        # Stopped, not gone. The terminal's SIGTSTP reaches cilkprof-run and the program
        # together, and bash reports the job stopped when cilkprof-run is: the program,
        # woken in read(2) on a loaded machine, may stop a moment later.
        self.assertEqual(self.wait_for_state(program, "T"), "T")
        self.send("fg\n")
        self.send("typed\n")  # read by the program, in the foreground again
        self.expect(r"got typed")
        self.expect(r"PROMPT> ")
        self.assertEqual(self.status(), 0)
        self.assert_profile(stopped)

        interrupted = self.dir.file("interrupted.cilkprof")
        self.send(f"{CILKPROF_RUN} -q -o {interrupted} -- {WORLD} flushed tty-wait\n")
        self.expect(r"ready (\d+)")
        self.send("\x03")  # Ctrl-C
        self.expect(r"PROMPT> ")
        self.assertEqual(self.status(), 128 + signal.SIGINT)
        self.assert_profile(interrupted)


if __name__ == "__main__":
    unittest.main()
