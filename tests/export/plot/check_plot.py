#!/usr/bin/env python3
"""Checks a `cilkprof plot --speedup` SVG: it parses as XML, has the upper and lower
bound polylines (upper >= lower at every P, upper = min(P, parallelism) rising from
speedup 1 at P = 1), and one measured point per worker count given.

  check_plot.py FILE.svg [WORKERS...]
"""
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def points(polyline):
    return [tuple(float(v) for v in p.split(",")) for p in polyline.get("points").split()]


def main():
    path, workers = sys.argv[1], sorted(int(w) for w in sys.argv[2:])
    root = ET.parse(path).getroot()
    failures = []
    lines = {p.get("id"): p for p in root.iter(SVG + "polyline")}
    for bound in ("upper-bound", "lower-bound"):
        if bound not in lines or len(points(lines[bound])) < 4:
            failures.append(f"no polyline#{bound} with at least 4 points")
    if not failures:
        upper, lower = points(lines["upper-bound"]), points(lines["lower-bound"])
        # SVG y grows downwards: a higher speedup has a smaller y.
        if [x for x, _ in upper] != [x for x, _ in lower]:
            failures.append("the bounds are not drawn at the same P")
        if any(u[1] > l[1] + 0.05 for u, l in zip(upper, lower)):
            failures.append(f"the lower bound is above the upper bound somewhere: {upper} vs {lower}")
        if any(b[1] > a[1] + 0.05 for a, b in zip(upper, upper[1:])):
            failures.append("the upper bound falls as P grows")
        if abs(upper[0][1] - lower[0][1]) > 0.05:
            failures.append("the bounds differ at P = 1 (both are speedup 1)")
    measured = [c for c in root.iter(SVG + "circle") if c.get("class") == "measured" and c.get("data-workers")]
    got = sorted(int(c.get("data-workers")) for c in measured)
    if got != workers:
        failures.append(f"measured points for workers {got}, expected {workers}")
    for c in measured:
        if c.get("data-workers") == "1" and abs(float(c.get("data-speedup")) - 1.0) > 1e-9:
            failures.append(f"the 1-worker point's speedup is {c.get('data-speedup')}, not 1")
        if float(c.get("data-speedup")) <= 0:
            failures.append(f"a point with speedup {c.get('data-speedup')}")
    for failure in failures:
        print("FAILED:", failure)
    print(f"{path}: bounds and {len(measured)} measured points checked")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
