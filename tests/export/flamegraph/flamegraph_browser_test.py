#!/usr/bin/env python3
"""`cilkprof flamegraph` as a person sees it (issue 16): a real profile of fib, its flame
graph rendered by headless Chromium. The screenshot is a picture (many colours, not one
background), the frames main and fib are in the document after its script ran, and
the script's zoom and search (driven through the URL fragment the script reads,
#zoom=N and #search=RE) change the document as they should. The inverted graph (an
icicle of callers) renders too. Skips (77) without chromium.

usage: flamegraph_browser_test.py CILKPROF FIB WORKDIR [--docs-screenshot PNG]
"""
import os
import re
import shutil
import subprocess
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402
import svg_frames  # noqa: E402

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message)


def main():
    cilkprof, fib, work = sys.argv[1:4]
    docs_png = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--docs-screenshot" else None
    chromium = browser.Browser()  # exits 77 without chromium, before the profile is made
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    env = dict(os.environ, CILK_NWORKERS="2")
    subprocess.run([cilkprof, "run", "-q", "-f", "-o", "fib.cilkprof", "--", fib, "32"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([cilkprof, "flamegraph", "fib.cilkprof", "-o", "fib.svg"], check=True)
    with open("fib.svg") as f:
        static_text = f.read()
    _, _, static = svg_frames.parse(static_text)
    for problem in svg_frames.check_geometry(static):
        check(False, "fib.svg: " + problem)
    # fib's frames: "(anonymous namespace)::fib(int)"; JS and Python read this pattern alike.
    search = r"fib\(int\)$"
    is_fib = lambda f: re.search(search, f["name"]) is not None  # noqa: E731

    # A picture, not a blank page: the frames' colours and more than the background.
    chromium.screenshot("fib.svg", "fib.png")
    colours, painted = browser.colour_census("fib.png")
    print("screenshot: %d colours, %.1f%% of pixels not the background" % (colours, 100 * painted))
    check(colours >= 20, "the screenshot has only %d colours" % colours)
    check(painted >= 0.10, "only %.1f%% of the screenshot is not background" % (100 * painted))
    if docs_png:
        # For docs/images/flamegraph.png: the whole graph, root included, when it fits 1400 pixels.
        height = int(float(re.search(r'<svg[^>]* height="([0-9.]+)"', static_text).group(1)))
        chromium.screenshot("fib.svg", "docs.png", height=min(height, 1400))
        shutil.copyfile("docs.png", docs_png)

    # The document after the script ran: the frames with their names and labels.
    root, area, frames = svg_frames.parse(chromium.dump_dom("fib.svg"))
    names = {f["name"] for f in frames}
    check(any(n.startswith("main") for n in names), "no frame 'main' in the document: %s" % sorted(names)[:20])
    check(any(is_fib(f) for f in frames), "no frame 'fib(int)' in the document")
    check(any("fib" in f["label"] for f in frames), "no frame shows the text 'fib'")
    check(any("s" in f["classes"] and "fib" in f["name"] for f in frames), "no spawned frame in fib is marked")
    check(len(frames) == len(static), "the script changed the number of frames")

    # Search: the matching frames marked, the covered share shown (each sample once).
    root, area, frames = svg_frames.parse(chromium.dump_dom("fib.svg", "#search=" + urllib.parse.quote(search)))
    marked = [f for f in frames if "match" in f["classes"]]
    check(len(marked) == sum(1 for f in static if is_fib(f)) and all(is_fib(f) for f in marked),
          "search marked %d frames, expected the %d fib frames" % (len(marked), sum(1 for f in static if is_fib(f))))
    matched = svg_frames.by_id(root, "matched").text or ""
    expected = "%.1f%% of work" % svg_frames.covered_percent(static, is_fib)
    print("search %s: %s" % (search, matched))
    check(expected in matched, "the matched line '%s' does not say %s" % (matched, expected))
    check("hidden" not in (svg_frames.by_id(root, "clear-search").get("class") or ""), "no Clear button after a search")

    # Zoom: the outermost fib frame fills the width, what it stands on stays, the rest goes.
    target = min((i for i, f in enumerate(static) if is_fib(f)), key=lambda i: (static[i]["depth"], -static[i]["w"]))
    z = static[target]
    root, area, frames = svg_frames.parse(chromium.dump_dom("fib.svg", "#zoom=%d" % target))
    zoomed = frames[target]
    check(abs(zoomed["x"]) < 1e-6 and abs(zoomed["w"] - 100) < 1e-6,
          "the zoomed frame is at x=%g%%, %g%% wide, not the whole width" % (zoomed["x"], zoomed["w"]))
    for i, (before, after) in enumerate(zip(static, frames)):
        # The script's own tolerance: percentages written with 6 decimals.
        inside = before["depth"] >= z["depth"] and before["x"] >= z["x"] - 1e-5 and \
            before["x"] + before["w"] <= z["x"] + z["w"] + 1e-5
        below = before["depth"] < z["depth"] and before["x"] <= z["x"] + 1e-5 and \
            before["x"] + before["w"] >= z["x"] + z["w"] - 1e-5
        if inside:
            want = before["w"] * 100 / z["w"]
            check("hide" not in after["classes"] and abs(after["w"] - want) < 1e-3 * max(1, want),
                  "zoom: frame %d (%s) should be %g%% wide, is %g%% (%s)" % (i, before["name"], want, after["w"],
                                                                         after["classes"]))
        elif below:
            check("ancestor" in after["classes"], "zoom: frame %d (%s) below the zoomed one is not kept" %
                  (i, before["name"]))
        else:
            check("hide" in after["classes"], "zoom: frame %d (%s) outside the zoomed one is not hidden" %
                  (i, before["name"]))
    check("hidden" not in (svg_frames.by_id(root, "reset-zoom").get("class") or ""), "no Reset zoom button when zoomed")

    # Inverted: an icicle of callers, the root on top, fib's callers under it.
    subprocess.run([cilkprof, "flamegraph", "fib.cilkprof", "--inverted", "-o", "fib-inverted.svg"], check=True)
    root, area, frames = svg_frames.parse(chromium.dump_dom("fib-inverted.svg"))
    for problem in svg_frames.check_geometry(frames):
        check(False, "fib-inverted.svg: " + problem)
    check(float(area.get("data-step")) > 0, "the inverted graph does not grow downwards")
    check(any(is_fib(f) and f["depth"] == 1 for f in frames), "no fib frame right under the inverted root")
    check(any(is_fib(f) and f["depth"] == 2 for f in frames), "fib's callers (fib) are not under it")
    chromium.screenshot("fib-inverted.svg", "fib-inverted.png")
    colours, painted = browser.colour_census("fib-inverted.png")
    check(colours >= 20 and painted >= 0.05, "the inverted screenshot looks blank (%d colours)" % colours)

    chromium.close()
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("ok: %d frames, screenshot, search, zoom and the inverted graph" % len(static))
    return 0


if __name__ == "__main__":
    sys.exit(main())
