#!/usr/bin/env python3
"""The pprof and folded exports, read back by the real readers (issue 16).

Profiles of fib (Cilk: spawn edges) and lock_contention (lock_wait, lock_blame) are
made once with `cilkprof run` (the `profiles` step, a CTest fixture); then
  pprof   `go tool pprof -top` and `-traces` list the same top functions (flat) and the
          same total as `cilkprof view flat` and `cilkprof summary` (exit 77, skipped,
          without `go`);
  folded  each leaf function's total is its `cilkprof view flat` exclusive value;
          spawn edges are "[spawn]" frames;
  errors  an unknown metric, an unwritable -o path, a file that is not a profile:
          one clear message and a non-zero exit.
Usage: test_exports.py profiles|pprof|folded|errors
Environment: CILKPROF, FIB, LOCK_CONTENTION (programs), WORK (a directory).
"""
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict

CILKPROF = os.environ["CILKPROF"]
WORK = os.environ["WORK"]
FIB = os.path.join(WORK, "fib.cilkprof")
LOCKS = os.path.join(WORK, "lock_contention.cilkprof")
SKIP = 77

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message)
    return condition


def run(*args, expect=0, env=None):
    result = subprocess.run(list(args), capture_output=True, text=True, env=env)
    if expect is not None and result.returncode != expect:
        raise SystemExit(f"{' '.join(args)}: exit {result.returncode}, expected {expect}\n"
                         f"stdout: {result.stdout[-2000:]}\nstderr: {result.stderr[-2000:]}")
    return result


def cilkprof(*args, expect=0):
    return run(CILKPROF, *args, expect=expect)


# ---- what cilkprof itself says ----

def basename(path):
    return path.rsplit("/", 1)[-1]


def function_name(row):
    # As the exports name an unknown function: "?? [libm.so.6]".
    if row["name"] == "??":
        return "?? [" + (basename(row["module"]) or "unknown module") + "]"
    return row["name"]


def flat_functions(profile, metric):
    """Exclusive `metric` per function name, from `cilkprof view flat --format json`
    (rows: root > module > file > function > line)."""
    tree = json.loads(cilkprof("view", "flat", profile, "--format", "json", "--threshold", "0",
                               "--metric", metric).stdout)
    values = defaultdict(float)
    for module in tree["children"]:
        for file in module["children"]:
            for function in file["children"]:
                values[function_name(function)] += function["metrics"][metric]["exclusive"]
    return values, tree["metrics"][metric]["inclusive"]


def summary_of(profile):
    """`cilkprof summary --format json`: "metrics" is {name: {"total", "unit", ...}} in
    the profile's order, "program" the executable."""
    return json.loads(cilkprof("summary", profile, "--format", "json").stdout)


def top(values, count):
    ranked = sorted(((v, k) for k, v in values.items() if v > 0), reverse=True)
    return [k for _, k in ranked[:count]]


def close(a, b, tolerance):
    return abs(a - b) <= tolerance


# ---- pprof ----

UNIT_SCALE = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "": 1}


def pprof_number(text):
    match = re.fullmatch(r"(-?[0-9.e+]+)([a-zµ]*)", text)
    if not match:
        raise ValueError(f"not a pprof value: {text!r}")
    return float(match.group(1)) * UNIT_SCALE.get(match.group(2), 1)


def go_pprof(*args):
    env = dict(os.environ, PPROF_TMPDIR=WORK, HOME=WORK, GOCACHE=os.path.join(WORK, "gocache"))
    return run("go", "tool", "pprof", *args, env=env).stdout


def pprof_name(name):
    # pprof marks a function shown where it was inlined with " (inline)"; the flat
    # view's function rows are the function, wherever it ran.
    return name[:-len(" (inline)")] if name.endswith(" (inline)") else name


def pprof_top(path, metric):
    """Flat value per function and the total, from `go tool pprof -top` (exact: -unit=ns)."""
    text = go_pprof("-top", "-sample_index=" + metric, "-nodecount=1000000", "-nodefraction=0",
                    "-edgefraction=0", "-unit=ns", path)
    total = None
    flat = defaultdict(float)
    rows = False
    for line in text.splitlines():
        match = re.search(r"Showing nodes accounting for \S+, \S+ of (\S+) total", line)
        if match:
            total = pprof_number(match.group(1))
        if re.match(r"\s*flat\s+flat%\s+sum%\s+cum\s+cum%", line):
            rows = True
            continue
        if rows and line.strip():
            parts = line.split(None, 5)
            flat[pprof_name(parts[5])] += pprof_number(parts[0])
    if total is None:
        # pprof prints no "Showing" line when the metric's total is 0.
        total = sum(flat.values())
    return flat, total, text


def pprof_traces(path, metric):
    """[(value, [frames leaf first], {label: value})] from `go tool pprof -traces`, the
    samples with a value of `metric`. Values are printed with 3-4 significant digits."""
    text = go_pprof("-traces", "-sample_index=" + metric, path)
    traces = []
    for block in text.split("-----------+-------------------------------------------------------")[1:]:
        labels = {}
        frames = []
        value = None
        for line in (l for l in block.splitlines() if l.strip()):
            label = re.match(r"\s+(\w+):\s+(.*)$", line)
            if label and value is None:
                labels[label.group(1)] = label.group(2)
            elif value is None:
                parts = line.split(None, 1)
                value = pprof_number(parts[0])
                frames.append(parts[1].strip())
            else:
                frames.append(line.strip())
        if value:
            traces.append((value, frames, labels))
    return traces, text


def compare_top(what, ours, theirs, tolerance, count=8):
    """The `count` hottest functions of each side are the other's, with the same values."""
    ok = True
    for name in top(ours, count):
        ok &= check(close(theirs.get(name, 0), ours[name], tolerance(ours[name])),
                    f"{what}: {name}: cilkprof view flat {ours[name]:.0f}, pprof {theirs.get(name, 0):.0f}")
    for name in top(theirs, count):
        ok &= check(close(theirs[name], ours.get(name, 0), tolerance(theirs[name])),
                    f"{what}: {name}: pprof {theirs[name]:.0f}, cilkprof view flat {ours.get(name, 0):.0f}")
    return ok


def check_pprof(profile, metrics, spawns):
    path = profile + ".pb.gz"
    cilkprof("export", profile, "--format", "pprof", "-o", path)
    with open(path, "rb") as f:
        check(f.read(2) == b"\x1f\x8b", f"{path} is gzip-compressed")
    raw = go_pprof("-raw", path)
    summary = summary_of(profile)
    sample_types = re.search(r"^Samples:\n(.*)$", raw, re.M).group(1).replace("[dflt]", "").split()
    # The profile's own metrics: the summary adds the derived ones (effort and the percentages).
    wanted = [name + "/" + ("nanoseconds" if m["unit"] == "ns" else m["unit"])
              for name, m in summary["metrics"].items() if name not in ("effort", "% idleness", "% overhead")]
    check(sample_types == wanted, f"{path}: sample types {sample_types}, expected {wanted} (one per metric)")
    mappings = raw.split("Mappings\n", 1)[1] if "Mappings\n" in raw else ""
    first_mapping = mappings.splitlines()[0] if mappings else ""
    executable = summary["program"]
    check(executable in first_mapping, f"{path}: the first mapping is the executable {executable}: {first_mapping!r}")
    check(re.search(r"\b[0-9a-f]{16,}\b", first_mapping) is not None, f"{path}: the main mapping has a build ID")
    samples = len(re.findall(r"^\s+\d+(?:\s+\d+)*: ", raw.split("Locations\n", 1)[0], re.M))

    for metric in metrics:
        ours, our_total = flat_functions(profile, metric)
        summary_total = summary["metrics"][metric]["total"]
        # fib on 2 workers may have no idleness or overhead at all; the rest it must have.
        if not check(summary_total > 0 or metric in ("idleness", "overhead"), f"{profile}: no {metric} at all"):
            continue
        check(close(our_total, summary_total, 1e-6 * summary_total), f"{profile} {metric}: view flat and summary agree")
        # The export rounds each sample's values to integers: at most 0.5 each.
        exact = lambda value: max(1.0, 0.5 * samples)
        theirs, total, text = pprof_top(path, metric)
        check(close(total, summary_total, exact(total)),
              f"{path} {metric}: pprof -top total {total:.0f}, cilkprof summary {summary_total:.0f}")
        if not compare_top(f"{path} -top {metric}", ours, theirs, exact):
            print(text[:3000])
        # -traces prints each sample's value with 3 significant digits or more.
        traces, _ = pprof_traces(path, metric)
        leaf = defaultdict(float)
        for value, frames, _ in traces:
            leaf[pprof_name(frames[0])] += value
        approximate = lambda value: 0.005 * value + 1.0
        check(close(sum(leaf.values()), summary_total, approximate(summary_total)),
              f"{path} -traces {metric}: total {sum(leaf.values()):.0f}, cilkprof summary {summary_total:.0f}")
        compare_top(f"{path} -traces {metric}", ours, leaf, approximate)
        check(not any(frames[0] == "[spawn]" for _, frames, _ in traces), f"{path}: a [spawn] frame is never a leaf")
        # fib's work is nearly all in spawned calls; its few idleness samples need not be.
        if spawns and metric == "work":
            check(any("[spawn]" in frames for _, frames, _ in traces),
                  f"{path} -traces {metric}: the spawn edges are [spawn] frames")
    return raw


def check_inline_frames(profile, raw):
    """A function the top-down view shows inlined into its caller is a Line before its
    caller's in one Location (innermost first)."""
    tree = json.loads(cilkprof("view", "top-down", profile, "--format", "json", "--threshold", "0").stdout)
    pairs = set()

    def walk(row, parent):
        if row.get("inlined") and parent is not None:
            pairs.add((row["name"], parent["name"]))
        for child in row["children"]:
            walk(child, row)
    walk(tree, None)
    if not pairs:
        print(f"note: {profile} has no inlined frames to check")
        return
    locations = raw.split("Locations\n", 1)[1].split("Mappings\n", 1)[0]
    lines_of = []  # per location: function names, innermost first
    for line in locations.splitlines():
        match = re.match(r"\s+(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(.*)$", line)
        if match:
            lines_of.append([match.group(2)])
        elif lines_of and line.strip():
            lines_of[-1].append(line.strip())
    found = False
    for lines in lines_of:
        for inner, outer in zip(lines, lines[1:]):
            if any(inner.startswith(f + " ") and outer.startswith(c + " ") for f, c in pairs):
                found = True
    check(found, f"{profile}: an inlined function and its caller are two Lines of one Location, innermost first")


def step_pprof():
    if shutil.which("go") is None:
        print("SKIPPED: `go` is not installed, so `go tool pprof` cannot read the export "
              "(Debian: apt-get install golang-go; scripts/install-deps.sh installs it)")
        return SKIP
    raw = check_pprof(FIB, ["work", "samples", "idleness", "overhead"], spawns=True)
    check_inline_frames(FIB, raw)
    check_pprof(LOCKS, ["work", "lock_wait", "lock_blame"], spawns=False)
    traces, _ = pprof_traces(LOCKS + ".pb.gz", "lock_wait")
    check(any(labels.get("lock") for _, _, labels in traces),
          "lock_contention: lock samples carry a lock=NAME label")
    return 0


# ---- folded ----

def folded(profile, *args):
    lines = cilkprof("export", profile, "--format", "folded", *args).stdout.splitlines()
    paths = []
    for line in lines:
        stack, weight = line.rsplit(" ", 1)
        check(re.fullmatch(r"[0-9]+", weight) is not None, f"folded weight {weight!r} is an integer")
        paths.append((stack.split(";"), int(weight)))
    return paths


def check_folded(profile, metric, spawns):
    paths = folded(profile, *(["--metric", metric] if metric else []))
    metric = metric or "work"
    ours, our_total = flat_functions(profile, metric)
    leaf = defaultdict(int)
    for frames, weight in paths:
        leaf[frames[-1]] += weight
    check(len({";".join(f) for f, _ in paths}) >= 0.99 * len(paths), f"{profile}: one folded line per path")
    check(close(sum(leaf.values()), our_total, max(2.0, 0.5 * len(paths))),
          f"{profile} folded {metric}: total {sum(leaf.values())}, cilkprof {our_total:.0f}")
    for name in set(ours) | set(leaf):
        if ours.get(name, 0) >= 1 or leaf.get(name, 0) >= 1:
            lines = sum(1 for f, _ in paths if f[-1] == name)
            check(close(leaf.get(name, 0), ours.get(name, 0), max(1.0, 0.5 * lines)),
                  f"{profile} folded {metric}: {name}: folded {leaf.get(name, 0)}, flat {ours.get(name, 0):.1f}")
    if spawns:
        check(any("[spawn]" in f[1:-1] for f, _ in paths), f"{profile}: spawn edges are [spawn] frames")
    check(not any(f[-1] == "[spawn]" for f, _ in paths), f"{profile}: a [spawn] frame is never a leaf")
    check(all(f[0] != "<program root>" or len(f) == 1 for f, _ in paths), f"{profile}: paths start at the root's child")
    return paths


def step_folded():
    paths = check_folded(FIB, None, spawns=True)
    check(any("main" in f[:6] for f, _ in paths), "fib: folded paths start at the root (_start, main)")
    check_folded(FIB, "samples", spawns=True)
    check_folded(LOCKS, "lock_wait", spawns=False)
    check_folded(LOCKS, "lock_blame", spawns=False)
    inverted = folded(FIB, "--inverted")
    check(sorted((";".join(reversed(f)), w) for f, w in inverted) == sorted((";".join(f), w) for f, w in paths),
          "fib: --inverted writes every path leaf first")
    return 0


# ---- errors ----

def step_errors():
    for fmt in ("pprof", "folded"):
        out = os.path.join(WORK, "unknown." + fmt)
        result = cilkprof("export", FIB, "--format", fmt, "--metric", "bogus", "-o", out, expect=1)
        check("unknown metric 'bogus'" in result.stderr and "work" in result.stderr and "idleness" in result.stderr,
              f"{fmt}: an unknown metric names the profile's metrics: {result.stderr!r}")
        check(len(result.stderr.strip().splitlines()) == 1, f"{fmt}: one message: {result.stderr!r}")
        check(not os.path.exists(out), f"{fmt}: nothing written for an unknown metric")
    result = cilkprof("export", FIB, "--format", "folded", "--metric", "% idleness", expect=1)
    check("percentage" in result.stderr, f"folded: a percentage metric is refused: {result.stderr!r}")
    result = cilkprof("export", FIB, "--format", "pprof", "-o", os.path.join(WORK, "no-such-dir", "fib.pb.gz"),
                      expect=1)
    check("cannot write in" in result.stderr and "-o" in result.stderr,
          f"pprof: an unwritable -o path says so: {result.stderr!r}")
    result = cilkprof("export", FIB, "--format", "pprof", "--inverted", "-o", os.path.join(WORK, "inverted.pb.gz"),
                      expect=1)
    check("--inverted" in result.stderr, f"pprof: --inverted is refused, saying why: {result.stderr!r}")
    piped = subprocess.run([CILKPROF, "export", FIB, "--format", "pprof"], capture_output=True)
    check(piped.returncode == 0 and piped.stdout[:2] == b"\x1f\x8b",
          f"pprof: written to a pipe without -o (exit {piped.returncode})")
    not_profile = os.path.join(WORK, "not-a-profile.cilkprof")
    with open(not_profile, "w") as f:
        f.write("main;fib 10\n")
    for fmt in ("pprof", "folded"):
        out = os.path.join(WORK, "from-text." + fmt)
        result = cilkprof("export", not_profile, "--format", fmt, "-o", out, expect=None)
        check(result.returncode != 0 and not_profile in result.stderr and "profile" in result.stderr,
              f"{fmt}: a file that is not a profile is refused: exit {result.returncode}, {result.stderr!r}")
        check(not os.path.exists(out), f"{fmt}: nothing written from a file that is not a profile")
    return 0


# ---- profiles (the fixture) ----

def step_profiles():
    shutil.rmtree(WORK, ignore_errors=True)  # nothing of an earlier run is read
    os.makedirs(WORK)
    env = dict(os.environ, CILK_NWORKERS="2")
    run(CILKPROF, "run", "-o", FIB, "--", os.environ["FIB"], "34", env=env)
    run(CILKPROF, "run", "-o", LOCKS, "--", os.environ["LOCK_CONTENTION"], env=env)
    return 0


def main():
    step = sys.argv[1]
    status = {"profiles": step_profiles, "pprof": step_pprof, "folded": step_folded, "errors": step_errors}[step]()
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
