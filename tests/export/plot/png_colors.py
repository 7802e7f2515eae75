#!/usr/bin/env python3
"""Checks that a rendering of the speedup plot (a PNG, decoded by ../png_decode.py) is
not blank: mostly white, with enough pixels near the
upper bound's blue (#1f77b4), the lower bound's red (#d62728) and the measured
points' green (#2ca02c).

  png_colors.py FILE.png
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from png_decode import read_png  # noqa: E402


def near(pixel, color, tolerance=40):
    return all(abs(p - c) <= tolerance for p, c in zip(pixel, color))


def main():
    width, height, rows = read_png(sys.argv[1])
    pixels = [pixel for row in rows for pixel in row]
    total = len(pixels)
    counts = {
        "white": sum(1 for p in pixels if near(p, (255, 255, 255), 8)),
        "blue (upper bound)": sum(1 for p in pixels if near(p, (0x1F, 0x77, 0xB4))),
        "red (lower bound)": sum(1 for p in pixels if near(p, (0xD6, 0x27, 0x28))),
        "green (measured)": sum(1 for p in pixels if near(p, (0x2C, 0xA0, 0x2C))),
    }
    print(f"{sys.argv[1]}: {width}x{height}, " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    failures = []
    if counts["white"] < total // 2:
        failures.append("less than half the picture is the white background")
    if counts["white"] == total:
        failures.append("the picture is blank")
    for name in ("blue (upper bound)", "red (lower bound)", "green (measured)"):
        if counts[name] < 30:
            failures.append(f"hardly any {name} pixels: {counts[name]}")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
