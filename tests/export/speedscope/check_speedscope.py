#!/usr/bin/env python3
"""Checks a speedscope export's numbers (speedscope_test.sh).

  check_speedscope.py flat SPEEDSCOPE.json FLAT.json METRIC
      the "all threads" profile against `cilkprof view flat --format json --threshold 0`:
      the same total, and per function the same exclusive value (innermost frame) and
      inclusive value (anywhere on the stack, once per sample).
  check_speedscope.py timeline SPEEDSCOPE.json METRIC
      the per-thread profiles of the profile cilkprof_make_timeline_profile writes.
  check_speedscope.py threads SPEEDSCOPE.json METRIC MIN_THREADS
      the per-thread profiles of a profile without a timeline (from its per-thread
      values): at least MIN_THREADS of them, and per stack their weights add up to the
      merged profile's.
"""
import json
import sys
from collections import defaultdict

MARKERS = ("[spawn]", "[task]", "<program root>")


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def function_of(frame_name):
    """The function name of a frame as the flat view names it (no "(inline)")."""
    return frame_name[: -len(" (inline)")] if frame_name.endswith(" (inline)") else frame_name


def profile_sums(doc, profile):
    names = [f["name"] for f in doc["shared"]["frames"]]
    exclusive, inclusive = defaultdict(float), defaultdict(float)
    total = 0.0
    for stack, weight in zip(profile["samples"], profile["weights"]):
        total += weight
        functions = [function_of(names[i]) for i in stack if names[i] not in MARKERS]
        if functions:
            exclusive[functions[-1]] += weight
        for name in set(functions):
            inclusive[name] += weight
    return total, exclusive, inclusive


def check_flat(speedscope_path, flat_path, metric):
    doc = json.load(open(speedscope_path))
    flat = json.load(open(flat_path))
    total, exclusive, inclusive = profile_sums(doc, doc["profiles"][0])
    failures = []
    flat_total = flat["metrics"][metric]["inclusive"]
    if not close(total, flat_total):
        failures.append(f"total {total} != flat view's {flat_total}")
    if total != doc["profiles"][0]["endValue"]:
        failures.append(f"endValue {doc['profiles'][0]['endValue']} != the weights' sum {total}")
    rows = defaultdict(list)  # function name -> its flat rows (one per file and module)

    # module > file > function > line: the function rows are the third level.
    for module in flat.get("children", []):
        for source_file in module.get("children", []):
            for function in source_file.get("children", []):
                rows[function["name"]].append(function["metrics"][metric])
    checked = 0
    for name, metrics in rows.items():
        if name.startswith("??") or name.startswith("<") or name.startswith("["):
            continue
        flat_exclusive = sum(m["exclusive"] for m in metrics)
        if not close(exclusive.get(name, 0.0), flat_exclusive):
            failures.append(f"{name}: exclusive {exclusive.get(name, 0.0)} != flat view's {flat_exclusive}")
        if len(metrics) == 1 and not close(inclusive.get(name, 0.0), metrics[0]["inclusive"]):
            failures.append(f"{name}: inclusive {inclusive.get(name, 0.0)} != flat view's {metrics[0]['inclusive']}")
        checked += 1
    if checked == 0:
        failures.append("the flat view has no function rows to compare")
    for failure in failures:
        print("FAILED:", failure)
    print(f"flat check of {speedscope_path}: total {total}, {checked} functions compared")
    return not failures


# What cilkprof_make_timeline_profile's timelines hold, per metric: each thread's
# samples (innermost function, weight).
EXPECTED_THREADS = {
    "work": [
        [("fib(int)", 1e6)] * 3,
        [("fib(int)", 1e6), ("add(int, int) (inline)", 1e6), ("add(int, int) (inline)", 1e6)],
    ],
    "overhead": [[("fib(int)", 1e6)], [("<program root>", 1e6)]],
    "samples": [
        [("fib(int)", 1), ("fib(int)", 1), ("fib(int)", 1), ("fib(int)", 1)],
        [("fib(int)", 1), ("add(int, int) (inline)", 1), ("<program root>", 1), ("add(int, int) (inline)", 1)],
    ],
}


def check_timeline(speedscope_path, metric):
    doc = json.load(open(speedscope_path))
    names = [f["name"] for f in doc["shared"]["frames"]]
    profiles = doc["profiles"]
    failures = []
    if not profiles[0]["name"].startswith("all threads"):
        failures.append(f"profile 0 is {profiles[0]['name']!r}, not the merged one")
    expected = EXPECTED_THREADS.get(metric)
    if expected is None:
        if len(profiles) != 1:
            failures.append(f"metric {metric}: {len(profiles)} profiles, expected the merged one only")
    else:
        if len(profiles) != 1 + len(expected):
            failures.append(f"{len(profiles)} profiles, expected 1 + {len(expected)} threads")
        for thread, (profile, samples) in enumerate(zip(profiles[1:], expected)):
            got = [(names[s[-1]], w) for s, w in zip(profile["samples"], profile["weights"])]
            if got != samples:
                failures.append(f"thread {thread} ({profile['name']}): {got} != {samples}")
            if f"worker {thread}" not in profile["name"]:
                failures.append(f"thread {thread}'s profile name {profile['name']!r} does not name worker {thread}")
    # The merged profile: the tree's own exclusive values, spawn edges as a [spawn] frame.
    stacks = {tuple(names[i] for i in s): w for s, w in zip(profiles[0]["samples"], profiles[0]["weights"])}
    if metric == "work":
        want = {
            ("main", "fib(int)"): 3e6,
            ("main", "fib(int)", "[spawn]", "fib(int)"): 2e6,
            # An address in fib with add inlined: the frames fib (its line 12), add.
            ("main", "fib(int)", "[spawn]", "fib(int)", "fib(int)", "add(int, int) (inline)"): 2e6,
        }
        if stacks != want:
            failures.append(f"merged work stacks {stacks} != {want}")
        frames = {f["name"]: f for f in doc["shared"]["frames"]}
        if frames["fib(int)"].get("file") != "/src/program.cpp" or frames["fib(int)"].get("line") != 8:
            failures.append(f"fib's frame {frames['fib(int)']} lacks its definition's file and line")
    for failure in failures:
        print("FAILED:", failure)
    print(f"timeline check of {speedscope_path} ({metric}): {len(profiles)} profiles")
    return not failures


def check_threads(speedscope_path, metric, min_threads):
    doc = json.load(open(speedscope_path))
    names = [f["name"] for f in doc["shared"]["frames"]]
    profiles = doc["profiles"]
    failures = []

    def stacks_of(profile):
        out = defaultdict(float)
        for stack, weight in zip(profile["samples"], profile["weights"]):
            out[tuple(names[i] for i in stack)] += weight
        return out

    merged = stacks_of(profiles[0])
    threads = profiles[1:]
    if not profiles[0]["name"].startswith("all threads"):
        failures.append(f"profile 0 is {profiles[0]['name']!r}, not the merged one")
    if len(threads) < min_threads:
        failures.append(f"{len(threads)} per-thread profiles, expected at least {min_threads}")
    summed = defaultdict(float)
    for profile in threads:
        if not (profile["name"].startswith("thread ") or profile["name"].startswith("other threads")):
            failures.append(f"per-thread profile named {profile['name']!r}")
        if not close(sum(profile["weights"]), profile["endValue"]):
            failures.append(f"{profile['name']}: endValue {profile['endValue']} != its weights' sum")
        for stack, weight in stacks_of(profile).items():
            summed[stack] += weight
    for stack in set(merged) | set(summed):
        if not close(merged.get(stack, 0.0), summed.get(stack, 0.0)):
            failures.append(f"stack {' > '.join(stack)}: merged {merged.get(stack, 0.0)} != threads' sum "
                            f"{summed.get(stack, 0.0)}")
            if len(failures) > 10:
                break
    total_merged, total_threads = profiles[0]["endValue"], sum(p["endValue"] for p in threads)
    if not close(total_merged, total_threads):
        failures.append(f"total: merged {total_merged} != threads' sum {total_threads}")
    for failure in failures:
        print("FAILED:", failure)
    print(f"threads check of {speedscope_path} ({metric}): {len(threads)} threads, "
          f"{len(merged)} stacks, total {total_merged}")
    return not failures


if __name__ == "__main__":
    if sys.argv[1] == "flat":
        ok = check_flat(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "threads":
        ok = check_threads(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        ok = check_timeline(sys.argv[2], sys.argv[3])
    sys.exit(0 if ok else 1)
