#!/usr/bin/env python3
"""End-to-end tests of Cilkprof: real programs, the real preloaded agent, the CLI.

Run by CTest (tests/e2e/CMakeLists.txt sets CILKPROF_BIN_DIR, CILKPROF_AGENT and
E2E_PROGRAMS). Each TestCase class is one CTest test. Assertions are about structure
(which calling contexts exist, which profiles exist) and use generous bounds for
statistical shares; nothing asserts on wall-clock time.
"""
import glob
import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

BIN = os.environ.get("CILKPROF_BIN_DIR", "")
PROGRAMS = os.environ.get("E2E_PROGRAMS", "")
CILKPROF = os.path.join(BIN, "cilkprof")
CILKPROF_RUN = os.path.join(BIN, "cilkprof-run")
CILKPROFD = os.path.join(BIN, "cilkprofd")
AGENT = os.environ.get("CILKPROF_AGENT", "")


def program(name):
    return os.path.join(PROGRAMS, name)


def run(cmd, env=None, check=True, timeout=240):
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run(cmd, env=full_env, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def view_json(profile, view="top-down"):
    out = run([CILKPROF, "view", view, "--format", "json", profile]).stdout
    return json.loads(out)


def summary_json(profile):
    return json.loads(run([CILKPROF, "summary", "--format", "json", profile]).stdout)


def walk(node, path=()):
    """Yields (path of names from the root, node) for every node of a JSON tree."""
    here = path + (node["name"],)
    yield here, node
    for child in node.get("children", []):
        yield from walk(child, here)


def find_nodes(tree, name):
    return [n for _, n in walk(tree) if n["name"] == name]


def child_named(node, name):
    for child in node.get("children", []):
        if child["name"] == name:
            return child
    return None


def has_chain(tree, chain):
    """True if some node named chain[0] has a child chain[1], which has chain[2]..."""
    for start in find_nodes(tree, chain[0]):
        node = start
        for name in chain[1:]:
            node = child_named(node, name)
            if node is None:
                break
        else:
            return True
    return False


def inclusive(node, metric="work"):
    return node["metrics"].get(metric, {}).get("inclusive", 0.0)


def names_in(tree):
    return {n["name"] for _, n in walk(tree)}


class ProfileDir:
    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cilkprof-e2e-")
        self.path = self.tmp.name

    def file(self, name):
        return os.path.join(self.path, name)

    def profiles(self):
        return sorted(glob.glob(os.path.join(self.path, "*.cilkprof")))

    def cleanup(self):
        self.tmp.cleanup()


class ShapeTest(unittest.TestCase):
    """main -> a -> b (3/4) and main -> c (1/4), the same under thread_entry."""

    @classmethod
    def setUpClass(cls):
        cls.dir = ProfileDir()
        cls.profile = cls.dir.file("shape.cilkprof")
        cls.result = run([CILKPROF_RUN, "-o", cls.profile, "--", program("e2e_shape")],
                         env={"UNITS": "60"})
        cls.tree = view_json(cls.profile)
        cls.summary = summary_json(cls.profile)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_program_output_untouched(self):
        self.assertEqual(self.result.stdout, "shape done 0\n")

    def test_paths_exist_exactly_as_written(self):
        for chain in (["main", "a", "b"], ["main", "c"], ["thread_entry", "a", "b"], ["thread_entry", "c"]):
            self.assertTrue(has_chain(self.tree, chain), f"missing path {' -> '.join(chain)}")
        # b is only ever called from a, and c never calls anything we wrote.
        for b in find_nodes(self.tree, "b"):
            self.assertFalse(any(child["name"] in ("a", "c", "main") for child in b.get("children", [])))

    def test_shares_hold(self):
        total_b = sum(inclusive(n) for n in find_nodes(self.tree, "b"))
        total_c = sum(inclusive(n) for n in find_nodes(self.tree, "c"))
        self.assertGreater(total_b + total_c, 0)
        share_b = total_b / (total_b + total_c)
        self.assertGreater(share_b, 0.60, f"b holds {share_b:.2%} of a+c work, expected about 75%")
        self.assertLess(share_b, 0.90, f"b holds {share_b:.2%} of a+c work, expected about 75%")

    def test_every_thread_sampled(self):
        self.assertGreaterEqual(self.summary["threads"], 2)
        main_work = sum(inclusive(n) for n in find_nodes(self.tree, "main"))
        thread_work = sum(inclusive(n) for n in find_nodes(self.tree, "thread_entry"))
        self.assertGreater(main_work, 0)
        self.assertGreater(thread_work, 0)
        # Both threads did the same work: neither may be missing most of its samples.
        ratio = main_work / thread_work
        self.assertGreater(ratio, 0.5)
        self.assertLess(ratio, 2.0)

    def test_partial_unwind_rate_below_one_percent(self):
        self.assertGreater(self.summary["samples"], 200)
        self.assertLess(self.summary["partial_unwind_rate"], 0.01)

    def test_summary_totals(self):
        for key in ("samples", "threads", "duration_s", "partial_unwind_rate", "work"):
            self.assertIn(key, self.summary)
        self.assertAlmostEqual(self.summary["work"], inclusive(self.tree), delta=1e-6 * max(1.0, self.summary["work"]))


class DlopenLibraryTest(unittest.TestCase):
    def test_hot_function_in_dlopened_library_has_name_and_line(self):
        d = ProfileDir()
        try:
            profile = d.file("dlopen.cilkprof")
            library = program("libe2e_hot_library.so")
            run([CILKPROF_RUN, "-o", profile, "--", program("e2e_dlopen_main"), library], env={"UNITS": "40"})
            tree = view_json(profile)
            hot = find_nodes(tree, "hot_function")
            self.assertTrue(hot, f"hot_function not in profile; names: {sorted(names_in(tree))[:50]}")
            self.assertTrue(any(n["file"].endswith("hot_library.c") for n in hot))
            self.assertTrue(any("e2e_hot_library" in n["module"] for n in hot))
            self.assertTrue(has_chain(tree, ["main", "hot_function"]))
            # The flat view resolves the hot loop to its source line in hot_library.c.
            source = open(os.path.join(os.path.dirname(__file__), "programs", "hot_library.c")).read().splitlines()
            hot_line = next(i + 1 for i, text in enumerate(source) if "HOT_LINE" in text)
            flat = run([CILKPROF, "view", "flat", "--format", "csv", profile]).stdout
            self.assertIn(f"hot_library.c", flat)
            self.assertTrue(any(f",{hot_line}," in row and "hot_function" in row for row in flat.splitlines()),
                            f"no flat row for hot_library.c:{hot_line}:\n{flat}")
        finally:
            d.cleanup()


class ForkAndExecTest(unittest.TestCase):
    def test_fork_gives_separate_profiles_without_double_counting(self):
        d = ProfileDir()
        try:
            run([CILKPROF_RUN, "-o", d.file("fork.cilkprof"), "--", program("e2e_fork_main")], env={"UNITS": "20"})
            profiles = d.profiles()
            self.assertEqual(len(profiles), 2, f"expected parent and child profiles, got {profiles}")
            trees = {p: names_in(view_json(p)) for p in profiles}
            parent = [p for p, names in trees.items() if "parent_work" in names]
            child = [p for p, names in trees.items() if "child_work" in names]
            self.assertEqual(len(parent), 1)
            self.assertEqual(len(child), 1)
            self.assertNotEqual(parent[0], child[0])
            self.assertIn("before_fork", trees[parent[0]])
            self.assertNotIn("before_fork", trees[child[0]], "the child inherited the parent's samples")
            self.assertNotIn("child_work", trees[parent[0]])
        finally:
            d.cleanup()

    def test_exec_continues_the_process_profile_and_passes_exit_status(self):
        d = ProfileDir()
        try:
            proc = run([CILKPROF_RUN, "-o", d.file("exec.cilkprof"), "--", program("e2e_exec_main"),
                        program("e2e_exec_target")], env={"UNITS": "20"}, check=False)
            self.assertEqual(proc.returncode, 3, proc.stderr)
            # One process, one profile: the image before exec and the one after.
            self.assertEqual(d.profiles(), [d.file("exec.cilkprof")])
            names = names_in(view_json(d.file("exec.cilkprof")))
            self.assertIn("before_exec", names)
            self.assertIn("after_exec", names)
            self.assertEqual(summary_json(d.file("exec.cilkprof"))["program"], program("e2e_exec_target"))
            self.assertIn(f"Exec chain       {program('e2e_exec_main')} -> {program('e2e_exec_target')}\n",
                          proc.stderr)
        finally:
            d.cleanup()


class WrapperChainTest(unittest.TestCase):
    """A program started through a wrapper (as version managers' shims are): a shell
    script forks a helper subshell, then execs env, which execs a program that forks a
    child doing the work. One profile per process that recorded something: the script's
    process (sh -> env -> program) and the child; the helper is counted, not written;
    the hint names the child's profile, which holds the samples."""

    WRAPPER = """#!/bin/sh
greeting=$(echo wrapped)
exec /usr/bin/env E2E_GREETING="$greeting" "$@"
"""

    def test_one_profile_per_process_and_the_hint_names_the_busiest(self):
        d = ProfileDir()
        try:
            wrapper = d.file("wrap")
            with open(wrapper, "w") as f:
                f.write(self.WRAPPER)
            os.chmod(wrapper, 0o755)
            main = d.file("wrap.cilkprof")
            proc = run([CILKPROF_RUN, "-o", main, "--", wrapper, program("e2e_fork_worker")],
                       env={"UNITS": "80"})
            profiles = d.profiles()
            self.assertEqual(len(profiles), 2, f"expected the script's process and the child, got {profiles}\n"
                             f"{proc.stderr}")
            self.assertIn(main, profiles)
            child = [p for p in profiles if p != main][0]
            self.assertIn(f"View it with: cilkprof view top-down {child}\n", proc.stderr)
            self.assertIn("1 more process recorded no samples", proc.stderr)

            # The script's process: sh, then env, then the program, in one profile.
            self.assertEqual(summary_json(main)["program"], program("e2e_fork_worker"))
            chain = [line for line in proc.stderr.splitlines() if line.startswith("Exec chain")]
            self.assertEqual(len(chain), 0, "the busiest profile (the child) never exec'd")
            self.assertIn("parent_setup", names_in(view_json(main)))
            self.assertNotIn("child_work", names_in(view_json(main)))

            # The child holds the work: ~300 ms of CPU on this machine, at 1 kHz.
            tree = view_json(child)
            work = sum(n["metrics"]["samples"]["inclusive"] for n in find_nodes(tree, "child_work"))
            self.assertGreaterEqual(work, 100, f"child_work has {work} samples")
            self.assertGreater(summary_json(child)["samples"], summary_json(main)["samples"])
            further = [line for line in proc.stderr.splitlines() if line.startswith(f"  {main} ")]
            self.assertEqual(len(further), 1, proc.stderr)
            self.assertRegex(further[0], r"/usr/bin/env -> " + program("e2e_fork_worker"))
        finally:
            d.cleanup()


class UnderscoreExitTest(unittest.TestCase):
    """A program ending in _exit or _Exit (no atexit handlers), even from a signal handler
    (SIGVTALRM after 0.4 s of CPU), before the agent's first periodic flush, keeps its
    samples and its exit status."""

    def check(self, how, status):
        d = ProfileDir()
        try:
            out = d.file(how + ".cilkprof")
            proc = run([CILKPROF_RUN, "-o", out, "--", program("e2e_underscore_exit"), how], check=False)
            self.assertEqual(proc.returncode, status, proc.stderr)
            tree = view_json(out)
            spins = find_nodes(tree, "spin_before_underscore_exit")
            self.assertTrue(spins, f"{how}: the samples before {how} are missing")
            # ~0.4 s of CPU at 1 kHz: at least 100 samples even on a loaded machine.
            samples = sum(n["metrics"]["samples"]["inclusive"] for n in spins)
            self.assertGreaterEqual(samples, 100, f"{how}: only {samples} samples")
        finally:
            d.cleanup()

    def test_underscore_exit(self):
        self.check("_exit", 3)

    def test_capital_exit(self):
        self.check("_Exit", 4)

    def test_underscore_exit_from_a_signal_handler(self):
        self.check("handler", 5)


class SpillMidConnectionTest(unittest.TestCase):
    """The aggregator goes away after it received data: the spill file the agent writes
    from then on can be imported alone (it declares again what the aggregator had)."""

    def test_spill_started_mid_connection_imports_alone(self):
        d = ProfileDir()
        try:
            sock_path = d.file("hangs-up.sock")
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(sock_path)
            server.listen(1)
            got = {}

            def take_two_frames_and_hang_up():
                conn, _ = server.accept()
                buf = b""
                frames = 0
                magic_seen = False
                while frames < 2:  # the Hello and the first Delta, in full
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    buf += chunk
                    if not magic_seen and len(buf) >= 8:  # the stream's magic, then frames
                        buf = buf[8:]
                        magic_seen = True
                    while magic_seen and len(buf) >= 8:  # length, checksum, message
                        size = struct.unpack("<I", buf[:4])[0]
                        if len(buf) < 8 + size:
                            break
                        buf = buf[8 + size:]
                        frames += 1
                got["frames"] = frames
                conn.close()
                server.close()

            listener = threading.Thread(target=take_two_frames_and_hang_up)
            listener.start()
            env = dict(os.environ)
            for name in list(env):
                if name.startswith("CILKPROF_"):
                    del env[name]
            env.update({"LD_PRELOAD": AGENT, "CILKPROF_SOCKET": sock_path, "CILKPROF_SPILL_DIR": d.path,
                        "CILKPROF_FLUSH_MS": "50", "UNITS": "60"})
            proc = subprocess.run([program("e2e_shape")], env=env, capture_output=True, text=True, timeout=240)
            listener.join(timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(got.get("frames"), 2, "the stand-in aggregator did not get a Hello and a Delta")
            spills = glob.glob(os.path.join(d.path, "cilkprof-*.spill"))
            self.assertEqual(len(spills), 1, proc.stderr)
            out = d.file("imported.cilkprof")
            run([CILKPROF, "import", "-o", out, spills[0]])
            tree = view_json(out)
            self.assertTrue(has_chain(tree, ["main", "a", "b"]) or has_chain(tree, ["a", "b"]),
                            "the imported spill lost the call paths")
        finally:
            d.cleanup()


class DaemonUnderGarbageTest(unittest.TestCase):
    """Random bytes sent to the daemon's socket neither crash it nor lose a real agent's profile."""

    def test_garbage_connections_do_not_lose_the_real_profile(self):
        d = ProfileDir()
        sock_path = d.file("cilkprofd.sock")
        daemon = subprocess.Popen([CILKPROFD, "--socket", sock_path, "--output-dir", d.path],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 60
            while not os.path.exists(sock_path):
                self.assertIsNone(daemon.poll(), "cilkprofd exited at start-up")
                self.assertLess(time.monotonic(), deadline, "cilkprofd did not create its socket")
                time.sleep(0.05)
            env = dict(os.environ, LD_PRELOAD=os.environ["CILKPROF_AGENT"], CILKPROF_SOCKET=sock_path, UNITS="60")
            target = subprocess.Popen([program("e2e_shape")], env=env, stdout=subprocess.PIPE, text=True)
            rng = random.Random(20261121)
            garbage_sent = 0
            while target.poll() is None or garbage_sent < 50:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.connect(sock_path)
                    size = rng.choice([1, 3, 4, 7, 100, 5000])
                    payload = bytes(rng.getrandbits(8) for _ in range(size))
                    if rng.random() < 0.3:  # a plausible length prefix followed by junk
                        payload = max(0, len(payload) + rng.randint(-2, 2)).to_bytes(4, "little") + payload
                    try:
                        s.sendall(payload)
                    except OSError:
                        pass  # the daemon may drop us mid-send: that is the point
                garbage_sent += 1
            self.assertEqual(target.wait(), 0)
            self.assertIsNone(daemon.poll(), "cilkprofd died under garbage input")
            deadline = time.monotonic() + 60
            while not d.profiles():
                self.assertLess(time.monotonic(), deadline, "no profile written for the real agent")
                time.sleep(0.1)
            time.sleep(0.5)  # the profile is renamed into place atomically; let the daemon log
            profiles = d.profiles()
            self.assertEqual(len(profiles), 1, profiles)
            tree = view_json(profiles[0])
            self.assertTrue(has_chain(tree, ["main", "a", "b"]))
            self.assertTrue(has_chain(tree, ["thread_entry", "c"]))
        finally:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
            d.cleanup()


class RunErrorsTest(unittest.TestCase):
    """Bad input gives one clear message and a non-zero exit, never a crash."""

    def assert_clean_error(self, proc, *needles):
        self.assertNotEqual(proc.returncode, 0)
        self.assertLess(proc.returncode, 128, f"crashed: {proc.returncode}\n{proc.stderr}")
        for needle in needles:
            self.assertIn(needle, proc.stderr.lower())
        self.assertNotIn("terminate called", proc.stderr)

    def test_missing_program(self):
        self.assert_clean_error(run([CILKPROF_RUN, "--", "/nonexistent/program"], check=False), "not found")

    def test_static_binary(self):
        self.assert_clean_error(run([CILKPROF_RUN, "--", program("e2e_static_hello")], check=False), "static")

    def test_unknown_option(self):
        proc = run([CILKPROF_RUN, "--no-such-option", "--", program("e2e_shape")], check=False)
        self.assert_clean_error(proc)
        self.assertEqual(proc.returncode, 2)

    def test_truncated_profile(self):
        d = ProfileDir()
        try:
            profile = d.file("t.cilkprof")
            run([CILKPROF_RUN, "-o", profile, "--", program("e2e_shape")], env={"UNITS": "4"})
            data = open(profile, "rb").read()
            with open(profile, "wb") as f:
                f.write(data[: len(data) // 2])
            self.assert_clean_error(run([CILKPROF, "view", "top-down", profile], check=False), "truncated")
        finally:
            d.cleanup()

    def test_program_exit_status_and_output_pass_through(self):
        d = ProfileDir()
        try:
            proc = run([CILKPROF_RUN, "-o", d.file("x.cilkprof"), "--", "/bin/sh", "-c", "echo hi; exit 7"],
                       check=False)
            self.assertEqual(proc.returncode, 7, proc.stderr)
            self.assertEqual(proc.stdout, "hi\n")
        finally:
            d.cleanup()


if __name__ == "__main__":
    unittest.main()
