#!/usr/bin/env python3
"""An agent streaming to cilkprofd over TCP (issue 12): it presents the daemon's shared
secret (CILKPROF_TCP_SECRET_FILE) and its profile arrives complete; with a wrong token,
no secret, or a secret file others can read, the program runs exactly as it would, the
agent says why in one line and the whole profile is in a spill file that imports.

Loopback only. Run by CTest (tests/e2e/CMakeLists.txt sets CILKPROF_BIN_DIR,
CILKPROF_AGENT and E2E_PROGRAMS). Waits are for files and log lines, each with a
generous guard; nothing asserts on time.
"""
import glob
import os
import re
import subprocess
import time
import unittest

from test_e2e import CILKPROF, CILKPROFD, ProfileDir, has_chain, program, run, view_json

TOKEN = "5f3c9a0e7d214b6c8e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f"
WRONG_TOKEN = "0123456789abcdef0123456789abcdef"
GUARD_SECONDS = 120


def write_secret(path, token, mode=0o600):
    with open(path, "w") as f:
        f.write(token + "\n")
    os.chmod(path, mode)


def wait_for(what, condition, proc=None):
    """Polls `condition` until it holds; fails after GUARD_SECONDS or if `proc` exits."""
    deadline = time.monotonic() + GUARD_SECONDS
    while True:
        value = condition()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"cilkprofd exited ({proc.returncode}) while waiting for {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


class TcpAuthTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = ProfileDir()
        cls.out = cls.dir.file("out")
        os.mkdir(cls.out, 0o700)
        cls.secret = cls.dir.file("secret")
        write_secret(cls.secret, TOKEN)
        cls.log_path = cls.dir.file("cilkprofd.log")
        cls.log = open(cls.log_path, "w")
        cls.daemon = subprocess.Popen(
            [CILKPROFD, "--socket", cls.dir.file("cilkprofd.sock"), "--tcp", "127.0.0.1:0",
             "--tcp-secret-file", cls.secret, "--output-dir", cls.out],
            stdout=cls.log, stderr=subprocess.STDOUT)
        port = wait_for("cilkprofd's TCP port in its log",
                        lambda: re.search(r"TCP port (\d+)", cls.read_log()), cls.daemon)
        cls.address = f"tcp:127.0.0.1:{port.group(1)}"

    @classmethod
    def tearDownClass(cls):
        cls.daemon.terminate()
        try:
            cls.daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            cls.daemon.kill()
        cls.log.close()
        cls.dir.cleanup()

    @classmethod
    def read_log(cls):
        with open(cls.log_path) as f:
            return f.read()

    def setUp(self):
        self.spill_dir = self.dir.file(f"spill-{self._testMethodName}")
        os.mkdir(self.spill_dir, 0o700)

    def run_shape(self, **env):
        """Runs the two-thread program under the agent; its result, checked unharmed."""
        full_env = dict(LD_PRELOAD=os.environ["CILKPROF_AGENT"], CILKPROF_SOCKET=self.address,
                        CILKPROF_SPILL_DIR=self.spill_dir, UNITS="40")
        full_env.update(env)
        result = run([program("e2e_shape")], env=full_env, check=False)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "shape done 0\n")
        self.assertNotIn(TOKEN, result.stderr)
        self.assertNotIn(WRONG_TOKEN, result.stderr)
        return result

    def profiles(self):
        return sorted(glob.glob(os.path.join(self.out, "*.cilkprof")))

    def assert_complete(self, profile):
        tree = view_json(profile)
        self.assertTrue(has_chain(tree, ["main", "a", "b"]), profile)
        self.assertTrue(has_chain(tree, ["thread_entry", "a", "b"]), profile)
        self.assertTrue(has_chain(tree, ["thread_entry", "c"]), profile)

    def assert_spilled_whole(self, result, *needles):
        """One line on stderr says why and where; the spill imports to the whole profile."""
        lines = [line for line in result.stderr.splitlines() if ".spill" in line]
        self.assertEqual(len(lines), 1, result.stderr)
        for needle in needles:
            self.assertIn(needle, lines[0])
        spills = glob.glob(os.path.join(self.spill_dir, "*.spill"))
        self.assertEqual(len(spills), 1, spills)
        self.assertIn(spills[0], lines[0])
        with open(spills[0], "rb") as f:
            content = f.read()
        self.assertNotIn(b"CILKPROF-AUTH", content)
        profile = os.path.join(self.spill_dir, "imported.cilkprof")
        run([CILKPROF, "import", "-q", "-o", profile, spills[0]])
        self.assert_complete(profile)

    def test_1_the_right_token_streams_the_whole_profile(self):
        before = len(self.profiles())
        result = self.run_shape(CILKPROF_TCP_SECRET_FILE=self.secret)
        wait_for("the profile in the output directory",
                 lambda: len(self.profiles()) > before, self.daemon)
        self.assert_complete(self.profiles()[-1])
        self.assertEqual(glob.glob(os.path.join(self.spill_dir, "*")), [], result.stderr)
        self.assertNotIn("refused", self.read_log())

    def test_2_a_wrong_token_is_refused_and_the_profile_spilled(self):
        wrong = self.dir.file("wrong-secret")
        write_secret(wrong, WRONG_TOKEN)
        before = len(self.profiles())
        refused_before = self.read_log().count("refused TCP connection")
        result = self.run_shape(CILKPROF_TCP_SECRET_FILE=wrong)
        self.assert_spilled_whole(result, self.address)
        wait_for("the daemon's refusal in its log",
                 lambda: self.read_log().count("refused TCP connection") > refused_before, self.daemon)
        self.assertIn("wrong token", self.read_log())
        self.assertEqual(len(self.profiles()), before)  # the refused session has no Hello: no file

    def test_3_without_a_secret_file_the_agent_says_what_to_set(self):
        result = self.run_shape()
        self.assert_spilled_whole(result, "CILKPROF_TCP_SECRET_FILE is not set", self.address)

    def test_4_a_secret_file_others_can_read_is_not_used(self):
        open_secret = self.dir.file("open-secret")
        write_secret(open_secret, TOKEN, 0o644)
        result = self.run_shape(CILKPROF_TCP_SECRET_FILE=open_secret)
        self.assert_spilled_whole(result, open_secret, "chmod 600")


if __name__ == "__main__":
    unittest.main()
