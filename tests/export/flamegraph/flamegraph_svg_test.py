#!/usr/bin/env python3
"""`cilkprof export --format svg` on generated profiles, without a browser: the file is
well-formed XML with the script and style inline and nothing fetched from the network;
the frames stand on their parents, the widths are the view's values (the top-level
frames against `cilkprof view top-down --format json`); --metric picks the widths,
and an unknown metric or a percentage is one clear error with no file left behind.
With --large, the 500k-context profile: the number of frames stays bounded (the
narrow ones are not drawn), and the size and time are printed.

usage: flamegraph_svg_test.py CILKPROF MAKE_SYNTHETIC_PROFILE WORKDIR [--large]
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svg_frames  # noqa: E402

MAX_FRAMES = 30000  # flamegraph_svg.cc's kMaxFrames
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message)


def export(cilkprof, profile, output, *args):
    return subprocess.run([cilkprof, "export", profile, "--format", "svg", "-o", output] + list(args),
                          capture_output=True, text=True)


def check_file(path, label):
    with open(path) as f:
        text = f.read()
    root, area, frames = svg_frames.parse(text)  # raises on malformed XML
    check("<script" in text and "<style" in text, label + ": no inline script or style")
    check("http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text,
          label + ": the file refers to the network")
    for problem in svg_frames.check_geometry(frames)[:10]:
        check(False, label + ": " + problem)
    return text, root, area, frames


def small(cilkprof, make_profile):
    subprocess.run([make_profile, "-o", "small.cilkprof", "--contexts", "3000", "--depth", "12",
                    "--functions", "15", "--seed", "3"], check=True)
    result = export(cilkprof, "small.cilkprof", "small.svg")
    check(result.returncode == 0, "export failed: " + result.stderr)
    _, _, _, frames = check_file("small.svg", "small.svg")
    # The top-level frames are the top-down view's children of the root, same shares.
    view = json.loads(subprocess.run([cilkprof, "view", "top-down", "small.cilkprof", "--format", "json",
                                      "--depth", "1", "--threshold", "0"],
                                     capture_output=True, text=True, check=True).stdout)
    total = view["metrics"]["work"]["inclusive"]
    expected = sorted(100 * c["metrics"]["work"]["inclusive"] / total for c in view["children"]
                      if c["metrics"]["work"]["inclusive"] / total >= 1 / 11800.0)
    top = [f for f in frames if f["depth"] == 1]
    drawn = sorted(f["w"] for f in top)
    check(len(drawn) == len(expected) and all(abs(a - b) < 1e-4 for a, b in zip(drawn, expected)),
          "the frames on the root are %s%%, the view's children %s%%" % (drawn[:5], expected[:5]))
    check(all("work:" in f["title"] for f in frames), "a tooltip without the work value")
    # Every frame's percentage in its tooltip is its width.
    for f in frames[:200]:
        shown = float(f["title"].split("\n")[1].split("(")[1].split("%")[0])
        check(abs(shown - f["w"]) < 0.051, "frame %s: tooltip says %g%%, width %g%%" % (f["name"], shown, f["w"]))

    result = export(cilkprof, "small.cilkprof", "small-effort.svg", "--metric", "effort")
    check(result.returncode == 0, "--metric effort failed: " + result.stderr)
    if result.returncode == 0:
        _, _, area, effort = check_file("small-effort.svg", "small-effort.svg")
        check(area.get("data-metric") == "effort" and "effort:" in effort[1]["title"], "--metric effort not drawn")

    result = export(cilkprof, "small.cilkprof", "small-inverted.svg", "--inverted")
    check(result.returncode == 0, "--inverted failed: " + result.stderr)
    if result.returncode == 0:
        _, _, area, inverted = check_file("small-inverted.svg", "small-inverted.svg")
        check(float(area.get("data-step")) > 0, "--inverted does not grow downwards")
        top_inverted = sum(f["w"] for f in inverted if f["depth"] == 1)
        check(top_inverted <= 100.001, "inverted top-level frames add up to %g%%" % top_inverted)

    for metric, expected in (("bogus", "unknown metric 'bogus'"), ("% idleness", "percentage")):
        result = export(cilkprof, "small.cilkprof", "bad.svg", "--metric", metric)
        check(result.returncode != 0, "--metric %s succeeded" % metric)
        check(expected in result.stderr and "work" in result.stderr,
              "--metric %s: the error '%s' does not say '%s' and name the metrics" % (metric, result.stderr.strip(),
                                                                                      expected))
        check(len(result.stderr.strip().splitlines()) == 1, "--metric %s: more than one line of error" % metric)
        check(not os.path.exists("bad.svg"), "--metric %s left a file behind" % metric)


def large(cilkprof, make_profile):
    subprocess.run([make_profile, "-o", "large.cilkprof", "--contexts", "500000", "--depth", "64",
                    "--functions", "40", "--seed", "7"], check=True)
    for args, name in (([], "large.svg"), (["--inverted"], "large-inverted.svg")):
        start = time.monotonic()
        result = export(cilkprof, "large.cilkprof", name, *args)
        seconds = time.monotonic() - start
        check(result.returncode == 0, "export of the 500k-context profile failed: " + result.stderr)
        if result.returncode != 0:
            continue
        _, _, _, frames = check_file(name, name)
        size = os.path.getsize(name)
        print("500k contexts %s: %d frames, %.1f MB, %.1f s" % (" ".join(args) or "(top-down)", len(frames),
                                                                size / 1e6, seconds))
        check(len(frames) <= MAX_FRAMES + 1, "%s: %d frames drawn, more than %d" % (name, len(frames), MAX_FRAMES))
        check(size <= 400 * (MAX_FRAMES + 1) + 100000, "%s: %d bytes for %d frames" % (name, size, len(frames)))
    os.remove("large.cilkprof")


def main():
    cilkprof, make_profile, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    if "--large" in sys.argv[4:]:
        large(cilkprof, make_profile)
    else:
        small(cilkprof, make_profile)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
