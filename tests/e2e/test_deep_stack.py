#!/usr/bin/env python3
"""A 10,000-deep recursion profiled in both unwind modes (issue 12, row 8).

Every sample's stack is deeper than the agent's frame buffer: each must keep its real
root (main) and its innermost frames with one "[deep stack: frames elided]" node
between them, and the summary must blame the depth, not missing unwind information.
Run by CTest (tests/e2e/CMakeLists.txt); helpers from test_e2e.py.
"""
import sys
import unittest

from test_e2e import CILKPROF_RUN, ProfileDir, program, run, summary_json, view_json, walk

ELIDED = "[deep stack: frames elided]"
DEPTH = 10000  # the recursion's depth (programs/deep_recursion.c)
# The views' JSON nests one object per frame kept (about 520 here): more than the
# json module's and walk()'s recursion allows by default.
sys.setrecursionlimit(20000)


class DeepStackTest(unittest.TestCase):
    def profile(self, unwind):
        d = ProfileDir()
        self.addCleanup(d.cleanup)
        path = d.file(f"deep-{unwind}.cilkprof")
        run([CILKPROF_RUN, "-q", "--unwind", unwind, "-o", path, "--", program("e2e_deep_recursion")],
            env={"UNITS": "40"})
        return view_json(path), summary_json(path)

    def check(self, unwind):
        tree, summary = self.profile(unwind)
        self.assertGreater(summary["samples"], 50)
        leaves = 0
        at_bottom = 0
        outside = 0
        for path, node in walk(tree):
            samples = node["metrics"].get("samples", {}).get("exclusive", 0)
            if samples == 0:
                continue
            leaves += samples
            if "deep_level" not in path:
                # Before the recursion or after it (main's return, exit, or the sample
                # the thread takes itself as it ends): a shallow stack, no marker.
                outside += samples
                self.assertNotIn(ELIDED, path)
                continue
            with self.subTest(path=path[:4] + ("...",) + path[-3:]):
                # <program root>, then the C library's start code, then main: the real root.
                self.assertIn("main", path[:6])
                self.assertNotIn("<partial unwind>", path)
                self.assertEqual(path.count(ELIDED), 1)
                marker = path.index(ELIDED)
                self.assertEqual(path[marker - 1], "deep_level")
                self.assertEqual(path[marker + 1], "deep_level")
                # At the bottom (deep_bottom, or burn_iterations inlined into it), or,
                # rarely, on the way down or up: deep_level innermost.
                bottom = "deep_bottom" in path[-2:]
                at_bottom += samples if bottom else 0
                self.assertTrue(bottom or path[-1] == "deep_level", path[-3:])
        self.assertEqual(leaves, summary["samples"])
        # The recursion takes microseconds to go down and up, the bottom all the rest.
        self.assertGreaterEqual(at_bottom, 0.95 * leaves)
        self.assertEqual(summary["deep_stack_samples"], leaves - outside)
        self.assertEqual(summary["deep_stack_truncated"], 0)
        # The agent's counters reach the profile: every recursion level was walked, and
        # all but the kept frames of each sample are counted as elided.
        self.assertGreaterEqual(summary["deepest_stack"], DEPTH)
        self.assertGreaterEqual(summary["deep_stack_frames_elided"], at_bottom * (DEPTH - 512))
        warnings = " ".join(summary["warnings"])
        self.assertIn("deeper than the agent keeps (deep recursion", warnings)
        self.assertIn(ELIDED, warnings)
        self.assertNotIn("unwind information", warnings)
        self.assertNotIn("partial call path", warnings)
        # The cost of walking deep stacks with DWARF, and the faster way, are named.
        self.assertEqual("--unwind fp walks it" in warnings, unwind == "dwarf")

    def test_dwarf(self):
        self.check("dwarf")

    def test_frame_pointers(self):
        self.check("fp")


if __name__ == "__main__":
    unittest.main(argv=sys.argv)
