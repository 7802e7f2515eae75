#!/usr/bin/env python3
"""The example service (examples/service/) and its load generator: replies are right
(checked here against an independent Python computation), the load generator counts
and checks what it sends (and catches a wrong reply), and the service ends with status
0 and removes its socket on `quit` and on SIGTERM, telling systemd (Type=notify) when it
is ready and when it stops.

Run by CTest (tests/examples/CMakeLists.txt sets CILK_SERVICE and CILK_SERVICE_LOAD).
Readiness is the service's "listening on" line on stderr; nothing waits on time.
"""
import os
import signal
import socket
import subprocess
import tempfile
import threading
import unittest

SERVICE = os.environ["CILK_SERVICE"]
LOAD = os.environ["CILK_SERVICE_LOAD"]
MASK64 = (1 << 64) - 1


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def sort_reply(n, seed):
    """What `sort N SEED` must answer: the keys of examples/common SplitMix64, sorted."""
    state, keys = seed, []
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        value = mix64(state)
        keys.append(value - (1 << 64) if value >= 1 << 63 else value)
    keys.sort()
    return f"ok {keys[0]} {keys[n // 2]} {keys[-1]}"


def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


class Service:
    """cilk_service on a socket in a fresh directory, started and ready."""

    def __init__(self, *extra):
        self.dir = tempfile.TemporaryDirectory(prefix="cilk-service-test-")
        self.path = os.path.join(self.dir.name, "service.sock")
        self.proc = subprocess.Popen([SERVICE, "--socket", self.path, *extra], stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True)
        first = self.proc.stderr.readline()
        if "listening on " + self.path not in first:
            self.proc.kill()
            raise AssertionError(f"cilk_service did not start: {first!r}")

    def finish(self):
        """Waits for the exit; returns (status, the rest of stderr)."""
        rest = self.proc.stderr.read()
        status = self.proc.wait()
        return status, rest

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc.stderr.close()
        self.dir.cleanup()


def load(*args):
    return subprocess.run([LOAD, *args], capture_output=True, text=True)


class ServiceTest(unittest.TestCase):
    def setUp(self):
        self.service = Service("--log-every", "0")
        self.addCleanup(self.service.close)

    def converse(self, lines):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(self.service.path)
            s.sendall("".join(line + "\n" for line in lines).encode())
            f = s.makefile("r")
            return [f.readline().rstrip("\n") for _ in lines]

    def test_replies(self):
        requests = ["fib 0", "fib 1", "fib 23", "sort 1", "sort 5000 7", "sort 3000", "nqueens 1",
                    "nqueens 8", "nqueens 10", "ping", "  fib   12 ", "bogus", "fib", "fib 41",
                    "sort 0", "nqueens x", "ping pong", ""]
        replies = self.converse(requests)
        self.assertEqual(replies[:11], [
            "ok 0", "ok 1", f"ok {fib(23)}", sort_reply(1, 1), sort_reply(5000, 7), sort_reply(3000, 1),
            "ok 1", "ok 92", "ok 724", "ok pong", f"ok {fib(12)}"])
        self.assertRegex(replies[11], r"^error unknown request 'bogus'; expected fib N")
        self.assertEqual(replies[12], "error fib needs N (fib N)")
        self.assertEqual(replies[13], "error N 41 is out of range 0..40")
        self.assertEqual(replies[14], "error N 0 is out of range 1..10000000")
        self.assertEqual(replies[15], "error N 'x' is not a decimal integer")
        self.assertEqual(replies[16], "error too many words for ping")
        self.assertRegex(replies[17], r"^error empty request")
        # A line longer than the limit ends that connection, not the service.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(self.service.path)
            s.sendall(b"f" * 5000)
            f = s.makefile("r")
            self.assertEqual(f.readline(), "error request line too long; closing the connection\n")
            try:  # closed with our excess bytes unread: EOF, or a reset
                self.assertEqual(f.readline(), "")
            except ConnectionResetError:
                pass
        self.assertEqual(self.converse(["ping"]), ["ok pong"])

    def test_load_count_then_quit(self):
        result = load("--socket", self.service.path, "--count", "300", "--mix", "fib:3,sort:1,nqueens:1",
                      "--fib", "20", "--sort", "20000", "--nqueens", "8", "--connections", "2", "--quit")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertRegex(result.stdout, r"cilk_service_load: 300 requests in [0-9.]+ s on 2 connections")
        self.assertIn("replies: 300 correct, 0 wrong", result.stdout)
        for label in ("fib 20", "sort 20000 1", "nqueens 8", "all"):
            self.assertRegex(result.stdout, rf"\n  {label} +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+\n")
        counts = [int(line.split()[-5]) for line in result.stdout.splitlines()
                  if line.startswith(("  fib", "  sort", "  nqueens"))]
        self.assertEqual(sum(counts), 300)
        status, stderr = self.service.finish()
        self.assertEqual(status, 0, stderr)
        self.assertIn("stopped by a quit request after 301 requests", stderr)
        self.assertFalse(os.path.exists(self.service.path))

    def test_sigterm(self):
        result = load("--socket", self.service.path, "--count", "20", "--mix", "sort:1", "--sort", "1000")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.service.proc.send_signal(signal.SIGTERM)
        status, stderr = self.service.finish()
        self.assertEqual(status, 0, stderr)
        self.assertIn("stopped by SIGTERM after 20 requests", stderr)
        self.assertFalse(os.path.exists(self.service.path))

    def test_second_service_on_the_same_socket_is_refused(self):
        second = subprocess.run([SERVICE, "--socket", self.service.path], capture_output=True, text=True)
        self.assertEqual(second.returncode, 1)
        self.assertIn("another service is listening at " + self.service.path, second.stderr)
        self.assertEqual(self.converse(["ping"]), ["ok pong"])


class SystemdNotifyTest(unittest.TestCase):
    def test_ready_and_stopping(self):
        """Type=notify (deploy/cilk-service.service): READY=1 once listening, STOPPING=1 on stop."""
        with tempfile.TemporaryDirectory() as d:
            notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            notify.bind(os.path.join(d, "notify"))
            os.environ["NOTIFY_SOCKET"] = os.path.join(d, "notify")
            try:
                service = Service()
            finally:
                del os.environ["NOTIFY_SOCKET"]
            self.addCleanup(service.close)
            self.assertEqual(notify.recv(256), b"READY=1")
            service.proc.send_signal(signal.SIGTERM)
            self.assertEqual(notify.recv(256), b"STOPPING=1")
            status, stderr = service.finish()
            self.assertEqual(status, 0, stderr)
            notify.close()


class LoadGeneratorTest(unittest.TestCase):
    def test_wrong_replies_fail_the_run(self):
        """A fake service answering "ok 0" to everything: every reply is counted wrong."""
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "fake.sock")
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(path)
            listener.listen(1)

            def serve():
                conn, _ = listener.accept()
                with conn, conn.makefile("rw") as f:
                    for _ in f:
                        f.write("ok 0\n")
                        f.flush()

            thread = threading.Thread(target=serve)
            thread.start()
            result = load("--socket", path, "--count", "10", "--mix", "fib:1", "--fib", "10")
            thread.join()
            listener.close()
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("replies: 0 correct, 10 wrong", result.stdout)
        self.assertIn("first: 'fib 10' got 'ok 0', expected 'ok 55'", result.stderr)

    def test_no_service(self):
        with tempfile.TemporaryDirectory() as d:
            result = load("--socket", os.path.join(d, "none.sock"), "--count", "1")
        self.assertEqual(result.returncode, 1)
        self.assertRegex(result.stderr, r"cannot connect to .*none\.sock: No such file or directory; "
                                        r"is cilk_service running\?")
        self.assertIn("0 requests", result.stdout)

    def test_bad_options(self):
        for args, message in [(["--mix", "fib:1,bogus:2"], "--mix: unknown request kind 'bogus'"),
                              (["--mix", "fib:0"], "every weight is 0"),
                              (["--count", "5", "--duration", "1s"], "not both"),
                              (["--duration", "10 parsecs"], "is not a positive duration"),
                              (["--fib", "41"], "--fib: 41 is out of range"),
                              (["--frobnicate"], "unknown option '--frobnicate'")]:
            result = load(*args)
            self.assertEqual(result.returncode, 2, args)
            self.assertIn(message, result.stderr)
            self.assertIn("Run 'cilk_service_load --help' for usage.", result.stderr)


if __name__ == "__main__":
    unittest.main()
